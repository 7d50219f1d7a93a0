//! Moving SQLite rows to PostgreSQL without a struct per table: a value tagged with its server
//! type, read from a rusqlite row by the same tag, and rows of them written in `COPY`'s binary
//! format (`copy_row`).

use postgres::types::{to_sql_checked, IsNull, ToSql, Type};

use super::words::TsVector;

/// The server type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// bigint (SQLite INTEGER)
    Int,
    /// int
    Int4,
    /// smallint
    Int2,
    /// text
    Text,
    /// boolean (SQLite 0/1)
    Bool,
    /// double precision
    Float,
    /// tsvector (built by pidx, `words`)
    Words,
    /// bytea (a raw line compressed by push, `lines`)
    Bytes,
}

impl Ty {
    pub fn sql(self) -> &'static str {
        match self {
            Ty::Int => "bigint",
            Ty::Int4 => "int",
            Ty::Int2 => "smallint",
            Ty::Text => "text",
            Ty::Bool => "boolean",
            Ty::Float => "float8",
            Ty::Words => "tsvector",
            Ty::Bytes => "bytea",
        }
    }
}

/// One value.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Int(Option<i64>),
    Int4(Option<i32>),
    Int2(Option<i16>),
    Text(Option<String>),
    Bool(Option<bool>),
    Float(Option<f64>),
    Words(TsVector),
    Bytes(Option<Vec<u8>>),
}

impl Val {
    /// Column `i` of a SQLite row, read as `ty`.
    ///
    /// # Errors
    /// A column of the wrong type.
    pub fn read(r: &rusqlite::Row, i: usize, ty: Ty) -> rusqlite::Result<Val> {
        Ok(match ty {
            Ty::Int => Val::Int(r.get(i)?),
            Ty::Int4 => Val::Int4(r.get(i)?),
            Ty::Int2 => Val::Int2(r.get(i)?),
            Ty::Text => Val::Text(r.get(i)?),
            Ty::Bool => Val::Bool(r.get::<_, Option<i64>>(i)?.map(|v| v != 0)),
            Ty::Float => Val::Float(r.get(i)?),
            Ty::Words => Val::Words(TsVector::of(&r.get::<_, String>(i)?)),
            Ty::Bytes => Val::Bytes(r.get(i)?),
        })
    }

    /// Feeds a stable hash (what push compares to see whether a summary changed): the value's
    /// `Debug` text and a NUL, written straight into `out` (formatted into a `String` first, it
    /// was a quarter of the CPU time of a push with nothing to send).
    pub fn feed(&self, out: &mut Vec<u8>) {
        struct Bytes<'a>(&'a mut Vec<u8>);
        impl std::fmt::Write for Bytes<'_> {
            fn write_str(&mut self, s: &str) -> std::fmt::Result {
                self.0.extend_from_slice(s.as_bytes());
                Ok(())
            }
        }
        use std::fmt::Write as _;
        let w = &mut Bytes(out);
        // Writing into a Vec cannot fail.
        let _ = match self {
            Val::Int(v) => write!(w, "{v:?}"),
            Val::Int4(v) => write!(w, "{v:?}"),
            Val::Int2(v) => write!(w, "{v:?}"),
            Val::Text(v) => write!(w, "{v:?}"),
            Val::Bool(v) => write!(w, "{v:?}"),
            Val::Float(v) => write!(w, "{:?}", v.map(f64::to_bits)),
            Val::Words(v) => write!(w, "{v:?}"),
            Val::Bytes(v) => write!(w, "{v:?}"),
        };
        out.push(0);
    }
}

impl ToSql for Val {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Val::Int(v) => v.to_sql(ty, out),
            Val::Int4(v) => v.to_sql(ty, out),
            Val::Int2(v) => v.to_sql(ty, out),
            // PostgreSQL's text cannot hold U+0000 (a tool's binary output can): U+FFFD instead.
            Val::Text(Some(s)) if s.contains('\0') => s.replace('\0', "\u{fffd}").to_sql(ty, out),
            Val::Text(v) => v.to_sql(ty, out),
            Val::Bool(v) => v.to_sql(ty, out),
            Val::Float(v) => v.to_sql(ty, out),
            Val::Words(v) => v.to_sql(ty, out),
            Val::Bytes(v) => v.to_sql(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        <Option<i64>>::accepts(ty)
            || <Option<i32>>::accepts(ty)
            || <Option<i16>>::accepts(ty)
            || <Option<String>>::accepts(ty)
            || <Option<bool>>::accepts(ty)
            || <Option<f64>>::accepts(ty)
            || TsVector::accepts(ty)
            || <Option<Vec<u8>>>::accepts(ty)
    }

    to_sql_checked!();
}

pub type EncodeError = Box<dyn std::error::Error + Sync + Send>;

/// `COPY ... (FORMAT binary)`'s signature, flags and header extension.
pub fn copy_header(out: &mut bytes::BytesMut) {
    use bytes::BufMut;
    out.put_slice(b"PGCOPY\n\xff\r\n\0");
    out.put_i32(0);
    out.put_i32(0);
}

/// One row of binary `COPY`: the field count, then `source`, `fid` and `vals`, each as its
/// length and its binary value (these types' `ToSql` ignores the declared type).
///
/// # Errors
/// A value that cannot be encoded.
pub fn copy_row(
    out: &mut bytes::BytesMut,
    source: &str,
    fid: i64,
    vals: &[Val],
) -> Result<(), EncodeError> {
    copy_fields(out, vals.len() + 2);
    copy_field(out, &source)?;
    copy_field(out, &fid)?;
    for v in vals {
        copy_field(out, v)?;
    }
    Ok(())
}

/// The start of a row of binary `COPY` of `n` fields, each then written by [`copy_field`].
pub fn copy_fields(out: &mut bytes::BytesMut, n: usize) {
    out.extend_from_slice(&(n as i16).to_be_bytes());
}

/// The end of binary `COPY` data.
pub fn copy_trailer(out: &mut bytes::BytesMut) {
    out.extend_from_slice(&(-1i16).to_be_bytes());
}

/// One field of a row of binary `COPY`: its length and its binary value.
///
/// # Errors
/// A value that cannot be encoded.
pub fn copy_field<T: ToSql>(out: &mut bytes::BytesMut, v: &T) -> Result<(), EncodeError> {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    let len = match v.to_sql(&Type::UNKNOWN, out)? {
        IsNull::Yes => {
            out.truncate(at + 4);
            -1
        }
        IsNull::No => (out.len() - at - 4) as i32,
    };
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nul_character_is_sent_as_a_replacement_character() {
        let mut out = bytes::BytesMut::new();
        let text = Val::Text(Some("binary\0output".into()));
        text.to_sql(&Type::TEXT, &mut out).unwrap();
        assert_eq!(&out[..], "binary\u{fffd}output".as_bytes());
    }

    /// Servers keep the hashes of what earlier pidx versions fed: the bytes must never change.
    #[test]
    fn the_summary_bytes_fed_are_those_servers_hold() {
        let mut out = Vec::new();
        for v in [
            Val::Int(Some(-7)),
            Val::Int4(None),
            Val::Int2(Some(3)),
            Val::Text(Some("a \"q\"\n\u{1b}é".into())),
            Val::Bool(Some(true)),
            Val::Float(Some(1.5)),
            Val::Bytes(Some(vec![1, 255])),
        ] {
            v.feed(&mut out);
        }
        let want = "Some(-7)\0None\0Some(3)\0Some(\"a \\\"q\\\"\\n\\u{1b}é\")\0Some(true)\0\
                    Some(4609434218613702656)\0Some([1, 255])\0";
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }
}
