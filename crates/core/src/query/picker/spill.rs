//! Where the picker's compressed text tails wait until a match reads past a head: a temporary
//! file, unlinked as soon as it is made (nothing is left behind, even after a crash), read
//! back with one positioned read per tail. Keeping them there instead of in memory halves the
//! picker's memory; a match reads a tail only when a word's match runs past its head.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

/// The temporary file tails are written to.
pub struct Spill {
    file: Arc<File>,
    len: u64,
}

impl Spill {
    /// A new, already unlinked, file in the temporary directory, readable by its owner only
    /// (`tempfile::tempfile`: `O_TMPFILE` where the file system has it).
    ///
    /// # Errors
    /// The file cannot be made.
    pub fn new() -> io::Result<Spill> {
        Ok(Spill {
            file: Arc::new(tempfile::tempfile()?),
            len: 0,
        })
    }

    /// Writes `bytes` at the end; where they are.
    ///
    /// # Errors
    /// The write fails (a full disk).
    pub(super) fn put(&mut self, bytes: Box<[u8]>) -> io::Result<Stored> {
        let len = u32::try_from(bytes.len()).map_err(io::Error::other)?;
        self.file.write_all_at(&bytes, self.len)?;
        let at = self.len;
        self.len += u64::from(len);
        Ok(Stored::File {
            file: Arc::clone(&self.file),
            at,
            len,
        })
    }
}

/// Compressed bytes, in memory or in a [`Spill`].
pub(super) enum Stored {
    Memory(Box<[u8]>),
    File { file: Arc<File>, at: u64, len: u32 },
}

impl Stored {
    /// Bytes `start..end` of what was stored (`None` when they cannot be read back).
    pub fn read(&self, start: usize, end: usize) -> Option<std::borrow::Cow<'_, [u8]>> {
        match self {
            Stored::Memory(b) => b.get(start..end).map(std::borrow::Cow::Borrowed),
            Stored::File { file, at, len } => {
                if start > end || end > *len as usize {
                    return None;
                }
                let mut buf = vec![0; end - start];
                file.read_exact_at(&mut buf, at + start as u64).ok()?;
                Some(std::borrow::Cow::Owned(buf))
            }
        }
    }

    /// Bytes held in memory.
    pub fn in_memory(&self) -> usize {
        match self {
            Stored::Memory(b) => b.len(),
            Stored::File { .. } => 0,
        }
    }
}
