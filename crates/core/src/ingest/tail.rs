//! Reading a session file from a byte offset: complete lines only, plus the head and tail
//! windows whose hashes tell an append from a rewrite (docs/pi-format.md §12: pi's migration rewrites in
//! place with the same inode and a larger size, so size and inode alone cannot tell).

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::os::unix::fs::FileExt;

/// Bytes hashed at each end of the ingested prefix.
pub const WINDOW: usize = 4096;

pub fn hash(bytes: &[u8]) -> i64 {
    xxhash_rust::xxh3::xxh3_64(bytes) as i64
}

/// The first and last `WINDOW` bytes of the prefix `[0, offset)`, kept up to date as lines are
/// consumed.
#[derive(Default, Clone)]
pub struct Windows {
    head: Vec<u8>,
    tail: Vec<u8>,
}

impl Windows {
    /// Reads the windows of `[0, offset)` from the file.
    pub fn read(file: &File, offset: u64) -> std::io::Result<Windows> {
        let head_len = offset.min(WINDOW as u64) as usize;
        let mut head = vec![0; head_len];
        file.read_exact_at(&mut head, 0)?;
        let tail_len = offset.min(WINDOW as u64) as usize;
        let mut tail = vec![0; tail_len];
        file.read_exact_at(&mut tail, offset - tail_len as u64)?;
        Ok(Windows { head, tail })
    }

    pub fn push(&mut self, bytes: &[u8]) {
        if self.head.len() < WINDOW {
            let take = (WINDOW - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
        }
        if bytes.len() >= WINDOW {
            self.tail.clear();
            self.tail.extend_from_slice(&bytes[bytes.len() - WINDOW..]);
        } else {
            self.tail.extend_from_slice(bytes);
            if self.tail.len() > 16 * WINDOW {
                self.tail.drain(..self.tail.len() - WINDOW);
            }
        }
    }

    pub fn head_hash(&self) -> i64 {
        hash(&self.head)
    }

    pub fn tail_hash(&self) -> i64 {
        hash(&self.tail[self.tail.len().saturating_sub(WINDOW)..])
    }
}

/// The line buffer's capacity kept from one line to the next.
const KEEP_CAPACITY: usize = 4 << 20;

/// A line read from the file.
pub enum Chunk {
    /// A complete line (without its `\n`), starting at `offset`.
    Line { offset: u64 },
    /// The file ends with bytes that have no `\n` yet, starting at `offset`.
    Fragment { offset: u64 },
}

/// Reads lines from a start offset.
pub struct LineReader {
    reader: BufReader<File>,
    pub offset: u64,
    pub buf: Vec<u8>,
}

impl LineReader {
    pub fn new(mut file: File, offset: u64) -> std::io::Result<LineReader> {
        file.seek(SeekFrom::Start(offset))?;
        Ok(LineReader {
            reader: BufReader::with_capacity(1 << 20, file),
            offset,
            buf: Vec::new(),
        })
    }

    /// The next line into `self.buf` (its `\n` stripped), or `None` at the end of the file.
    pub fn next_chunk(&mut self) -> std::io::Result<Option<Chunk>> {
        self.release();
        self.buf.clear();
        let start = self.offset;
        let n = self.reader.read_until(b'\n', &mut self.buf)?;
        if n == 0 {
            return Ok(None);
        }
        self.offset += n as u64;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            Ok(Some(Chunk::Line { offset: start }))
        } else {
            Ok(Some(Chunk::Fragment { offset: start }))
        }
    }

    /// After a huge line: gives its memory back rather than hold it for the rest of the file
    /// (call once the line is used).
    pub fn release(&mut self) {
        if self.buf.capacity() > KEEP_CAPACITY {
            self.buf = Vec::new();
        }
    }

    /// Reads one byte at the current position (used to check a torn line's newline).
    pub fn peek_byte(&mut self) -> std::io::Result<Option<u8>> {
        let buf = self.reader.fill_buf()?;
        Ok(buf.first().copied())
    }

    pub fn skip_byte(&mut self) {
        self.reader.consume(1);
        self.offset += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_track_head_and_tail() {
        let mut w = Windows::default();
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        for chunk in data.chunks(333) {
            w.push(chunk);
        }
        assert_eq!(w.head_hash(), hash(&data[..WINDOW]));
        assert_eq!(w.tail_hash(), hash(&data[data.len() - WINDOW..]));
    }
}
