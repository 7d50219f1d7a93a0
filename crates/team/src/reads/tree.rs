//! pi's `getTree` on the team server (`tree_of` over the server's entry rows).

use postgres::Transaction;

use super::context::loadability;
use super::on::key;
use crate::pg::{server_err, LISTING_BODY, LISTING_TEXT};
use pidx_core::error::{Error, Result};
use pidx_core::query::resolve::Resolved;
use pidx_core::query::tree::{tree_of, Node, Tree};

/// pi's `getTree` of the session.
///
/// # Errors
/// Server errors.
pub fn tree(tx: &mut Transaction, s: &Resolved) -> Result<Tree> {
    let (source, fid) = key(s);
    if !loadability(tx, s)?.0 {
        return Ok(Tree {
            unopenable: true,
            ..Tree::default()
        });
    }
    let sql = format!(
        "SELECT e.seq, e.id, e.parent_id, e.type, e.role, e.ts, e.ts_ms,
                substr({LISTING_TEXT}, 1, 400), e.label, e.target_id
         FROM entries e {LISTING_BODY} WHERE e.source = $1 AND e.fid = $2 ORDER BY e.seq"
    );
    let rows = tx
        .query(sql.as_str(), &[&source, &fid])
        .map_err(server_err)?;
    tree_of(rows.iter().map(|r| {
        Ok::<_, Error>((
            Node {
                seq: r.get(0),
                id: r.get(1),
                parent_id: r.get(2),
                kind: r.get(3),
                role: r.get(4),
                ts: r.get(5),
                ts_ms: r.get(6),
                text: r.get(7),
                label: None,
                label_ts: None,
                children: Vec::new(),
            },
            r.get(8),
            r.get(9),
        ))
    }))
}
