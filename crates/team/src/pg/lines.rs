//! The raw JSONL lines the server keeps (`entries.raw_z`, pg 0007): compressed by push, each
//! line its own zstd frame, and read back by pidx. The server never looks inside a line (no SQL
//! reads it), so it stores bytes it cannot read; rows pushed before pg 0007 keep the line as
//! text (`entries.raw`), and `line` reads either.

use std::cell::RefCell;

use pidx_core::error::{Error, Result};

/// zstd's level for a line. Most lines are a few KB of JSON, under PostgreSQL's 2 KB TOAST
/// threshold, so the server kept them uncompressed (65 MB of 94 MB at 1,000 generated
/// sessions); measured in docs/team.md ("The server's size").
const LEVEL: i32 = 3;

thread_local! {
    /// One compressor per pushing thread: a fresh one per line set up its tables each time, which
    /// cost more than compressing (push took 8.0 s of CPU against 5.8-6.6 s without compressing,
    /// at 1,000 generated sessions).
    static PACKER: RefCell<zstd::bulk::Compressor<'static>> =
        RefCell::new(zstd::bulk::Compressor::new(LEVEL).expect("zstd accepts its level"));
}

/// A line as push sends it.
///
/// # Panics
/// Never: compressing into memory cannot fail at a valid level.
pub fn pack(line: &str) -> Vec<u8> {
    PACKER.with_borrow_mut(|z| {
        z.compress(line.as_bytes())
            .expect("zstd compresses into memory")
    })
}

/// A line as the server holds it: `raw_z` when push compressed it, else the text of a row
/// pushed before pg 0007.
///
/// # Errors
/// `Server` for a compressed line that does not decompress to UTF-8 (a damaged row), or a row
/// with neither.
pub fn line(raw: Option<String>, raw_z: Option<&[u8]>) -> Result<String> {
    let bad = |why: String| Error::Server(format!("a raw line on the server is damaged: {why}"));
    match (raw_z, raw) {
        (Some(z), _) => {
            let bytes = zstd::stream::decode_all(z).map_err(|e| bad(e.to_string()))?;
            String::from_utf8(bytes).map_err(|e| bad(e.to_string()))
        }
        (None, Some(text)) => Ok(text),
        (None, None) => Err(bad("the row holds no line".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_line_reads_back_byte_for_byte() {
        for text in ["", "{}", "{\"a\":\"é\\u0000\"}\u{0}", &"x".repeat(100_000)] {
            assert_eq!(line(None, Some(&pack(text))).unwrap(), text);
        }
    }

    #[test]
    fn the_compressed_line_is_preferred_and_the_old_text_still_reads() {
        let z = pack("new");
        assert_eq!(line(Some("old".into()), Some(&z)).unwrap(), "new");
        assert_eq!(line(Some("old".into()), None).unwrap(), "old");
        assert!(line(None, None).is_err());
        assert!(line(None, Some(b"not zstd")).is_err());
    }
}
