//! Compact JSON line writer that reproduces `JSON.stringify` output byte for byte for the values the
//! generator emits: keys in the order written, no whitespace, JavaScript string escaping and
//! JavaScript number formatting. Writing straight into a reused buffer avoids building
//! `serde_json::Value`s for every line.

use super::rng::Rng;
use std::fmt::Write as _;

/// One output line under construction. `first` tracks whether the next key or array element is
/// the first in its container (so no comma is needed).
pub struct Line {
    pub buf: Vec<u8>,
    first: bool,
}

impl Line {
    pub fn new() -> Self {
        Line {
            buf: Vec::with_capacity(1 << 16),
            first: true,
        }
    }

    pub fn clear(&mut self) {
        self.buf.clear();
        self.first = true;
    }

    pub fn obj(&mut self) {
        self.elem_sep();
        self.buf.push(b'{');
        self.first = true;
    }

    pub fn end(&mut self) {
        self.buf.push(b'}');
        self.first = false;
    }

    pub fn arr(&mut self) {
        self.elem_sep();
        self.buf.push(b'[');
        self.first = true;
    }

    pub fn end_arr(&mut self) {
        self.buf.push(b']');
        self.first = false;
    }

    /// Separator before an array element (also used by `obj`/`arr`; after a key `first` is true).
    fn elem_sep(&mut self) {
        if !self.first {
            self.buf.push(b',');
        }
    }

    /// Writes `"k":`. Keys are static ASCII identifiers and need no escaping.
    pub fn key(&mut self, k: &str) {
        if !self.first {
            self.buf.push(b',');
        }
        self.buf.push(b'"');
        self.buf.extend_from_slice(k.as_bytes());
        self.buf.extend_from_slice(b"\":");
        self.first = true; // the value that follows must not be preceded by a comma
    }

    /// A string value (escaped) as an array element or after `key`.
    pub fn str(&mut self, s: &str) {
        self.elem_sep();
        self.buf.push(b'"');
        escape_into(&mut self.buf, s);
        self.buf.push(b'"');
        self.first = false;
    }

    /// Raw JSON text (already valid) as a value.
    pub fn raw(&mut self, json: &str) {
        self.elem_sep();
        self.buf.extend_from_slice(json.as_bytes());
        self.first = false;
    }

    pub fn u64(&mut self, v: u64) {
        self.elem_sep();
        let _ = write!(Fmt(&mut self.buf), "{v}");
        self.first = false;
    }

    pub fn i64(&mut self, v: i64) {
        self.elem_sep();
        let _ = write!(Fmt(&mut self.buf), "{v}");
        self.first = false;
    }

    /// A number formatted like JavaScript's `Number.prototype.toString`.
    pub fn f64(&mut self, v: f64) {
        self.elem_sep();
        js_number(&mut self.buf, v);
        self.first = false;
    }

    pub fn bool(&mut self, v: bool) {
        self.raw(if v { "true" } else { "false" });
    }

    pub fn null(&mut self) {
        self.raw("null");
    }

    /// An 8-hex entry id as a string value.
    pub fn id8(&mut self, id: u32) {
        self.elem_sep();
        let _ = write!(Fmt(&mut self.buf), "\"{id:08x}\"");
        self.first = false;
    }

    /// An ISO-8601 UTC timestamp with milliseconds (`new Date(ms).toISOString()`) as a string value.
    pub fn iso(&mut self, ms: i64) {
        self.elem_sep();
        self.buf.push(b'"');
        write_iso(&mut self.buf, ms, b':', b'.');
        self.buf.push(b'"');
        self.first = false;
    }

    pub fn kv_str(&mut self, k: &str, v: &str) {
        self.key(k);
        self.str(v);
    }
    pub fn kv_u64(&mut self, k: &str, v: u64) {
        self.key(k);
        self.u64(v);
    }
    pub fn kv_i64(&mut self, k: &str, v: i64) {
        self.key(k);
        self.i64(v);
    }
    pub fn kv_f64(&mut self, k: &str, v: f64) {
        self.key(k);
        self.f64(v);
    }
    pub fn kv_bool(&mut self, k: &str, v: bool) {
        self.key(k);
        self.bool(v);
    }
    pub fn kv_raw(&mut self, k: &str, json: &str) {
        self.key(k);
        self.raw(json);
    }

    /// Terminates the line with `\n`.
    pub fn newline(&mut self) {
        self.buf.push(b'\n');
        self.first = true;
    }

    /// A string value holding `header` followed by random bytes, base64-encoded, about `nbytes`
    /// decoded bytes in all. Encodes straight into the buffer; `header` is at most 30 bytes.
    pub fn base64_image(&mut self, rng: &mut Rng, header: &[u8], nbytes: usize) {
        self.elem_sep();
        self.buf.push(b'"');
        // The header, topped up with random bytes to a whole number of 3-byte groups.
        let mut head = [0u8; 33];
        let hlen = header.len().div_ceil(3) * 3;
        head[..header.len()].copy_from_slice(header);
        head[header.len()..hlen]
            .copy_from_slice(&rng.next_u64().to_le_bytes()[..hlen - header.len()]);
        for c in head[..hlen].chunks_exact(3) {
            push_b64_group(&mut self.buf, c[0], c[1], c[2]);
        }
        // Random bytes encode to uniformly random characters: 10 characters per 60 random bits.
        let mut chars = (nbytes.saturating_sub(hlen) / 3) * 4;
        self.buf.reserve(chars + 1);
        while chars > 0 {
            let mut r = rng.next_u64();
            for _ in 0..chars.min(10) {
                self.buf.push(B64[(r & 63) as usize]);
                r >>= 6;
            }
            chars -= chars.min(10);
        }
        self.buf.push(b'"');
        self.first = false;
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

#[inline]
fn push_b64_group(buf: &mut Vec<u8>, a: u8, b: u8, c: u8) {
    let n = (a as u32) << 16 | (b as u32) << 8 | c as u32;
    buf.extend_from_slice(&[
        B64[(n >> 18) as usize & 63],
        B64[(n >> 12) as usize & 63],
        B64[(n >> 6) as usize & 63],
        B64[n as usize & 63],
    ]);
}

/// `fmt::Write` adapter over a byte vector.
struct Fmt<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Fmt<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// Escapes `s` as `JSON.stringify` does: `"` `\\` and the C0 controls (short forms for
/// `\b \t \n \f \r`, lowercase `\u00xx` otherwise); everything else, including non-ASCII, is copied.
pub fn escape_into(buf: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b >= 0x20 && b != b'"' && b != b'\\' {
            continue;
        }
        buf.extend_from_slice(&bytes[start..i]);
        start = i + 1;
        match b {
            b'"' => buf.extend_from_slice(b"\\\""),
            b'\\' => buf.extend_from_slice(b"\\\\"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            b'\r' => buf.extend_from_slice(b"\\r"),
            b'\t' => buf.extend_from_slice(b"\\t"),
            0x08 => buf.extend_from_slice(b"\\b"),
            0x0c => buf.extend_from_slice(b"\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                buf.extend_from_slice(b"\\u00");
                buf.push(HEX[(b >> 4) as usize]);
                buf.push(HEX[(b & 15) as usize]);
            }
        }
    }
    buf.extend_from_slice(&bytes[start..]);
}

/// JavaScript number formatting for finite values: shortest round-trip digits (Rust's `Display`
/// gives the same digits), plain decimal for 1e-6 <= |v| < 1e21, exponent form (`3e-7`) below.
pub fn js_number(buf: &mut Vec<u8>, v: f64) {
    let a = v.abs();
    if v == 0.0 {
        buf.push(b'0');
    } else if a < 1e-6 {
        let _ = write!(Fmt(buf), "{v:e}"); // "3e-7", "1.5e-7": same as JS
    } else {
        let _ = write!(Fmt(buf), "{v}");
    }
}

/// Writes `YYYY-MM-DDTHH<c>MM<c>SS<d>mmmZ`; with `c=':'`, `d='.'` this is `toISOString()`, with
/// `'-'` for both it is pi's file-name form.
pub fn write_iso(buf: &mut Vec<u8>, ms: i64, c: u8, d: u8) {
    let (days, msd) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (y, mo, da) = pidx::pi::js::civil_from_days(days);
    let (h, mi, s, milli) = (
        msd / 3_600_000,
        msd / 60_000 % 60,
        msd / 1000 % 60,
        msd % 1000,
    );
    let (c, d) = (c as char, d as char);
    let _ = write!(
        Fmt(buf),
        "{y:04}-{mo:02}-{da:02}T{h:02}{c}{mi:02}{c}{s:02}{d}{milli:03}Z"
    );
}

/// `toISOString()` as an owned string (for names and text, not the hot path).
pub fn iso_string(ms: i64) -> String {
    let mut v = Vec::with_capacity(24);
    write_iso(&mut v, ms, b':', b'.');
    String::from_utf8(v).expect("ascii")
}
