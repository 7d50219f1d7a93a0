//! Answers from the index. Each module owns its SQL, next to the function that runs it; none
//! of them parses the corpus (context reads single lines back by their stored byte range).

pub mod context;
pub mod list;
pub mod picker;
mod rawjson;
pub mod resolve;
pub mod search;
pub mod show;
pub mod sql;
pub mod stats;
pub mod status;

pub mod tree;

use rusqlite::Connection;

use crate::ingest::discover::Root;

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

    /// The condition on `files f`, values inlined as SQL string literals.
    fn sql(&self) -> String {
        let lit = |v: &str| format!("'{}'", v.replace('\'', "''"));
        let mut parts = Vec::new();
        if let Some(a) = &self.agent {
            parts.push(format!("g.agent_id = {}", lit(a)));
        }
        if let Some(k) = &self.key {
            parts.push(format!("g.session_key GLOB {}", lit(k)));
        }
        if let Some(c) = &self.channel {
            parts.push(format!("g.channel = {}", lit(c)));
        }
        if let Some(t) = &self.chat_type {
            parts.push(format!("g.chat_type = {}", lit(t)));
        }
        format!(
            " AND f.id IN (SELECT g.file_id FROM gw_files g WHERE {})",
            parts.join(" AND ")
        )
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
        Ok(Scope {
            roots: roots.to_vec(),
            root_ids,
            gateway: GatewayFilter::default(),
            include_silent: false,
        })
    }

    /// Whether any root in scope is an agent gateway.
    pub fn has_gateway(&self) -> bool {
        self.roots.iter().any(|r| r.layout.is_gateway())
    }

    /// An SQL condition on `files` alias `f` restricting rows to these roots (and to the
    /// gateway filter's transcripts).
    pub fn sql(&self) -> String {
        let ids: Vec<String> = self.root_ids.iter().map(i64::to_string).collect();
        let gateway = if self.gateway.is_empty() {
            String::new()
        } else {
            self.gateway.sql()
        };
        format!("f.root_id IN ({}){gateway}", ids.join(","))
    }
}
