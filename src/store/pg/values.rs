//! Moving SQLite rows to PostgreSQL without a struct per table: a value (or a column of values
//! for `unnest`) tagged with its server type, read from a rusqlite row by the same tag.

use postgres::types::{to_sql_checked, IsNull, ToSql, Type};

/// The server type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// bigint (SQLite INTEGER)
    Int,
    /// int
    Int4,
    /// text
    Text,
    /// boolean (SQLite 0/1)
    Bool,
    /// double precision
    Float,
}

impl Ty {
    pub fn sql(self) -> &'static str {
        match self {
            Ty::Int => "bigint",
            Ty::Int4 => "int",
            Ty::Text => "text",
            Ty::Bool => "boolean",
            Ty::Float => "float8",
        }
    }
}

/// One value.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Int(Option<i64>),
    Int4(Option<i32>),
    Text(Option<String>),
    Bool(Option<bool>),
    Float(Option<f64>),
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
            Ty::Text => Val::Text(r.get(i)?),
            Ty::Bool => Val::Bool(r.get::<_, Option<i64>>(i)?.map(|v| v != 0)),
            Ty::Float => Val::Float(r.get(i)?),
        })
    }

    /// Feeds a stable hash (what push compares to see whether a summary changed).
    pub fn feed(&self, out: &mut Vec<u8>) {
        let text = match self {
            Val::Int(v) => format!("{v:?}"),
            Val::Int4(v) => format!("{v:?}"),
            Val::Text(v) => format!("{v:?}"),
            Val::Bool(v) => format!("{v:?}"),
            Val::Float(v) => format!("{:?}", v.map(f64::to_bits)),
        };
        out.extend_from_slice(text.as_bytes());
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
            Val::Text(v) => v.to_sql(ty, out),
            Val::Bool(v) => v.to_sql(ty, out),
            Val::Float(v) => v.to_sql(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        <Option<i64>>::accepts(ty)
            || <Option<i32>>::accepts(ty)
            || <Option<String>>::accepts(ty)
            || <Option<bool>>::accepts(ty)
            || <Option<f64>>::accepts(ty)
    }

    to_sql_checked!();
}

/// A column of values, bound as one array parameter (`unnest($n::bigint[])`).
#[derive(Debug, Clone)]
pub enum Col {
    Int(Vec<Option<i64>>),
    Int4(Vec<Option<i32>>),
    Text(Vec<Option<String>>),
    Bool(Vec<Option<bool>>),
    Float(Vec<Option<f64>>),
}

impl Col {
    pub fn new(ty: Ty) -> Col {
        match ty {
            Ty::Int => Col::Int(Vec::new()),
            Ty::Int4 => Col::Int4(Vec::new()),
            Ty::Text => Col::Text(Vec::new()),
            Ty::Bool => Col::Bool(Vec::new()),
            Ty::Float => Col::Float(Vec::new()),
        }
    }

    pub fn push(&mut self, v: Val) {
        match (self, v) {
            (Col::Int(c), Val::Int(v)) => c.push(v),
            (Col::Int4(c), Val::Int4(v)) => c.push(v),
            (Col::Text(c), Val::Text(v)) => c.push(v),
            (Col::Bool(c), Val::Bool(v)) => c.push(v),
            (Col::Float(c), Val::Float(v)) => c.push(v),
            (c, v) => panic!("column {c:?} cannot take {v:?}"),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Col::Int(c) => c.len(),
            Col::Int4(c) => c.len(),
            Col::Text(c) => c.len(),
            Col::Bool(c) => c.len(),
            Col::Float(c) => c.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl ToSql for Col {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Col::Int(v) => v.to_sql(ty, out),
            Col::Int4(v) => v.to_sql(ty, out),
            Col::Text(v) => v.to_sql(ty, out),
            Col::Bool(v) => v.to_sql(ty, out),
            Col::Float(v) => v.to_sql(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        <Vec<Option<i64>>>::accepts(ty)
            || <Vec<Option<i32>>>::accepts(ty)
            || <Vec<Option<String>>>::accepts(ty)
            || <Vec<Option<bool>>>::accepts(ty)
            || <Vec<Option<f64>>>::accepts(ty)
    }

    to_sql_checked!();
}

/// `INSERT INTO table (cols) SELECT * FROM unnest($k::ty[], ...)` with the source and file id
/// as `$1`, `$2` in front.
pub fn unnest_insert(table: &str, cols: &[(&str, Ty)]) -> String {
    let names: Vec<&str> = cols.iter().map(|c| c.0).collect();
    let arrays: Vec<String> = cols
        .iter()
        .enumerate()
        .map(|(i, c)| format!("${}::{}[]", i + 3, c.1.sql()))
        .collect();
    format!(
        "INSERT INTO {table} (source, fid, {}) SELECT $1, $2, * FROM unnest({})",
        names.join(", "),
        arrays.join(", ")
    )
}

impl Col {
    /// Rows `start..end` as a column of their own (one chunk of a large insert).
    pub fn slice(&self, start: usize, end: usize) -> Col {
        match self {
            Col::Int(c) => Col::Int(c[start..end].to_vec()),
            Col::Int4(c) => Col::Int4(c[start..end].to_vec()),
            Col::Text(c) => Col::Text(c[start..end].to_vec()),
            Col::Bool(c) => Col::Bool(c[start..end].to_vec()),
            Col::Float(c) => Col::Float(c[start..end].to_vec()),
        }
    }
}
