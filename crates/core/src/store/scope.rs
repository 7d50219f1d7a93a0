//! The roots and gateway filters a query sees (`Scope`): which files of the index an answer
//! may read. It lives with the storage because both the queries and push (the team tier)
//! restrict the files they read by it.

use rusqlite::Connection;

use crate::pi::layout::Root;
use crate::store::filter::{int, placeholders, text, Where};

/// Agent-gateway filters (`--agent`, `--key`, `--channel`, `--chat-type`): only transcripts
/// linked to matching `sessions.json` metadata pass.
#[derive(Debug, Clone, Default)]
pub struct GatewayFilter {
    pub agent: Option<String>,
    /// A glob (`*`, `?`, `[...]`) over the whole session key.
    pub key: Option<String>,
    pub channel: Option<String>,
    pub chat_type: Option<String>,
}

impl GatewayFilter {
    pub fn is_empty(&self) -> bool {
        self.agent.is_none()
            && self.key.is_none()
            && self.channel.is_none()
            && self.chat_type.is_none()
    }

    /// Restricts `files f` to transcripts linked to matching `sessions.json` metadata.
    fn restrict(&self, w: &mut Where) {
        let mut conds = Vec::new();
        let mut values = Vec::new();
        for (col, v) in [
            ("g.agent_id = ?", &self.agent),
            ("g.session_key GLOB ?", &self.key),
            ("g.channel = ?", &self.channel),
            ("g.chat_type = ?", &self.chat_type),
        ] {
            if let Some(v) = v {
                conds.push(col);
                values.push(text(v.as_str()));
            }
        }
        w.and(
            format!(
                "f.id IN (SELECT g.file_id FROM gw_files g WHERE {})",
                conds.join(" AND ")
            ),
            values,
        );
    }
}

/// The roots a query sees: the index may hold other roots from other invocations.
#[derive(Debug, Clone)]
pub struct Scope {
    pub roots: Vec<Root>,
    root_ids: Vec<i64>,
    pub gateway: GatewayFilter,
    /// Show silent gateway turns (`NO_REPLY` housekeeping) too.
    pub include_silent: bool,
    /// Leave out the windows of keys OpenClaw no longer lists (`oc_deleted`); true when the
    /// index holds any, until `--include-deleted` clears it.
    pub hide_deleted: bool,
}

impl Scope {
    /// Looks up the ids of `roots` (roots never synced have none and contribute nothing).
    pub fn new(conn: &Connection, roots: &[Root]) -> rusqlite::Result<Scope> {
        let mut stmt = conn.prepare_cached("SELECT id FROM roots WHERE path = ?1")?;
        let mut root_ids = Vec::new();
        for r in roots {
            let path = r.path.to_string_lossy();
            if let Ok(id) = stmt.query_row([path.as_ref()], |row| row.get(0)) {
                root_ids.push(id);
            }
        }
        // Only an index holding deleted windows pays for the filter (a seek per file).
        let hide_deleted = conn
            .query_row("SELECT EXISTS (SELECT 1 FROM oc_deleted)", [], |r| r.get(0))
            .unwrap_or(false);
        Ok(Scope {
            roots: roots.to_vec(),
            root_ids,
            gateway: GatewayFilter::default(),
            include_silent: false,
            hide_deleted,
        })
    }

    /// Whether the scope keeps only some files of its roots (a gateway filter, or deleted
    /// windows left out): the callers that seek those files instead of reading every row.
    pub fn narrows(&self) -> bool {
        !self.gateway.is_empty() || self.hide_deleted
    }

    /// Whether none of the roots has ever been synced into this index.
    pub fn never_synced(&self) -> bool {
        self.root_ids.is_empty()
    }

    /// Whether any root in scope is an agent gateway.
    pub fn has_gateway(&self) -> bool {
        self.roots.iter().any(|r| r.layout.is_gateway())
    }

    /// Restricts `files` alias `f` to these roots (and to the gateway filter's transcripts,
    /// without the windows of deleted keys unless they are asked for).
    pub fn restrict(&self, w: &mut Where) {
        self.restrict_to_roots(w);
        if !self.gateway.is_empty() {
            self.gateway.restrict(w);
        }
        if self.hide_deleted {
            w.and(
                "NOT EXISTS (SELECT 1 FROM oc_deleted d WHERE d.dir = f.dir AND d.name = f.name)",
                [],
            );
        }
    }

    /// Restricts `files` alias `f` to these roots only (the caller applies the gateway filter
    /// its own way).
    pub fn restrict_to_roots(&self, w: &mut Where) {
        w.and(
            format!("f.root_id IN ({})", placeholders(self.root_ids.len())),
            self.root_ids.iter().map(|&id| int(id)),
        );
    }

    /// A `Where` holding this scope's restriction.
    pub fn filter(&self) -> Where {
        let mut w = Where::default();
        self.restrict(&mut w);
        w
    }
}
