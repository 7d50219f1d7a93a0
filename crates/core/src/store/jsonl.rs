//! Reading indexed bytes back from a session file: the index stores each entry's byte offset and
//! length in its JSONL file, and queries that need the raw line (context, snippets, literal
//! checks) read exactly those bytes, read-only.

use std::fs::File;
use std::os::unix::fs::FileExt;

/// Reads up to `max` bytes at `offset` (for context and snippets).
pub fn read_at(file: &File, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0; len];
    let mut got = 0;
    while got < len {
        let n = file.read_at(&mut buf[got..], offset + got as u64)?;
        if n == 0 {
            break;
        }
        got += n;
    }
    buf.truncate(got);
    Ok(buf)
}
