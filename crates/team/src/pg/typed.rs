//! Statements sent with their parameters' types, in one round trip. `Transaction::query` with
//! SQL text prepares a named statement, runs it and closes it: three round trips to the
//! server (`Parse`/`Describe`, `Bind`/`Execute`, `Close`, each to its `Sync`), about 40 for a
//! words search, 40 times the network's round trip to a distant server (docs/performance.md,
//! "A search's fixed cost"). `query_typed` sends the unnamed statement, its parameters and
//! their types at once. The types are those the server would infer for these parameters
//! (each statement casts where it matters), so a statement means the same either way.

use postgres::types::{ToSql, Type};
use postgres::{Row, Transaction};
use rusqlite::types::Value;

use pidx_core::error::Result;
use pidx_core::store::filter::Where;

use super::server_err;

/// A value bound to a statement, with its PostgreSQL type.
pub trait Param: ToSql + Sync {
    fn ty(&self) -> Type;
}

/// The PostgreSQL type of a Rust type bound as a parameter.
pub trait Typed {
    const TYPE: Type;
}

impl<T: Typed + ToSql + Sync> Param for T {
    fn ty(&self) -> Type {
        T::TYPE
    }
}

macro_rules! typed {
    ($($t:ty => $ty:ident),* $(,)?) => {
        $(impl Typed for $t {
            const TYPE: Type = Type::$ty;
        })*
    };
}

typed! {
    bool => BOOL, i16 => INT2, i32 => INT4, i64 => INT8, f64 => FLOAT8,
    u32 => OID, str => TEXT, String => TEXT, Vec<u8> => BYTEA,
    Vec<i64> => INT8_ARRAY, Vec<i32> => INT4_ARRAY, Vec<u32> => OID_ARRAY,
    Vec<String> => TEXT_ARRAY, Vec<&str> => TEXT_ARRAY, [String] => TEXT_ARRAY,
}

impl<T: Typed> Typed for Option<T> {
    const TYPE: Type = T::TYPE;
}

impl<T: Typed + ?Sized> Typed for &T {
    const TYPE: Type = T::TYPE;
}

/// `params` as `query_typed` takes them.
fn with_types<'a>(params: &[&'a dyn Param]) -> Vec<(&'a (dyn ToSql + Sync), Type)> {
    params
        .iter()
        .map(|&p| (p as &(dyn ToSql + Sync), p.ty()))
        .collect()
}

/// `w`'s values, in placeholder order (`Where::pg_sql` numbers them), then `more`.
pub fn where_params<'a>(w: &'a Where, more: &[&'a dyn Param]) -> Vec<&'a dyn Param> {
    /// A NULL, typed as text (a `Where` binds NULL only where text goes).
    static NULL: Option<String> = None;
    let mut out: Vec<&dyn Param> = w
        .values()
        .iter()
        .map(|v| -> &dyn Param {
            match v {
                Value::Null => &NULL,
                Value::Integer(i) => i,
                Value::Real(r) => r,
                Value::Text(t) => t,
                Value::Blob(b) => b,
            }
        })
        .collect();
    out.extend_from_slice(more);
    out
}

/// The rows of `sql` with `params`, in one round trip.
///
/// # Errors
/// Server errors.
pub fn query(tx: &mut Transaction, sql: &str, params: &[&dyn Param]) -> Result<Vec<Row>> {
    tx.query_typed(sql, &with_types(params)).map_err(server_err)
}

/// The first row of `sql` with `params`, if any, in one round trip (a statement of at most one
/// row: a key, or `LIMIT 1`).
///
/// # Errors
/// Server errors.
pub fn query_opt(tx: &mut Transaction, sql: &str, params: &[&dyn Param]) -> Result<Option<Row>> {
    Ok(query(tx, sql, params)?.into_iter().next())
}

/// The one row of `sql` with `params`, in one round trip.
///
/// # Errors
/// Server errors; no row or several.
pub fn query_one(tx: &mut Transaction, sql: &str, params: &[&dyn Param]) -> Result<Row> {
    tx.query_typed_one(sql, &with_types(params))
        .map_err(server_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_has_the_type_the_server_infers_for_it() {
        let (s, n, o): (String, i64, Option<&str>) = ("a".into(), 1, None);
        let ps: [&dyn Param; 3] = [&s, &n, &o];
        let types: Vec<Type> = with_types(&ps).into_iter().map(|(_, t)| t).collect();
        assert_eq!(types, [Type::TEXT, Type::INT8, Type::TEXT]);
        let mut w = Where::default();
        w.and(
            "x = ? AND y = ?",
            [pidx_core::store::filter::text("t"), Value::Integer(3)],
        );
        let f = 0.5_f64;
        let types: Vec<Type> = with_types(&where_params(&w, &[&f]))
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        assert_eq!(types, [Type::TEXT, Type::INT8, Type::FLOAT8]);
    }
}
