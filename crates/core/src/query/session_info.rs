//! One row of pi's session listing (`SessionInfo`, docs/pi-format.md §5.3) and the JSON pi
//! writes for it. Its own file because both the listing (`list`) and the picker's filter
//! (`picker`) work on it, and `list` runs the picker: neither need reach into the other.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use crate::pi::js;

/// One row of pi's session listing.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    pub file_id: i64,
    /// The machine it came from, on the team server (`None`: the local index).
    pub source: Option<String>,
    pub path: String,
    /// `header.id` as written (usually a string; absent in broken files).
    pub id: Option<Value>,
    pub cwd: String,
    pub name: Option<String>,
    pub parent_session_path: Option<Value>,
    pub created_ms: Option<i64>,
    pub modified_ms: i64,
    pub message_count: i64,
    pub first_message: String,
    pub all_messages_text: Option<String>,
    /// What an agent gateway's `sessions.json` says of this transcript (gateway roots only).
    pub gateway: Option<Box<GatewayInfo>>,
}

/// A gateway transcript's agent and session key (spec: docs/gateways.md).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayInfo {
    pub agent_id: String,
    pub session_key: Option<String>,
    /// The key's current transcript (false: an earlier one, left by a reset).
    pub current: Option<bool>,
    pub channel: Option<String>,
    pub chat_type: Option<String>,
    pub peer: Option<String>,
    pub display_name: Option<String>,
    pub subject: Option<String>,
    pub thread_id: Option<String>,
    /// A session of a key OpenClaw no longer lists (shown with `--include-deleted`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
}

/// The object `JSON.stringify(sessionInfo)` gives: undefined fields are left out, an Invalid
/// Date is `null`. Written straight to the output (10k sessions are ~13 MB of JSON).
impl Serialize for SessionInfo {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut o = serializer.serialize_map(None)?;
        if let Some(source) = &self.source {
            o.serialize_entry("source", source)?;
        }
        o.serialize_entry("path", &self.path)?;
        if let Some(id) = &self.id {
            o.serialize_entry("id", id)?;
        }
        o.serialize_entry("cwd", &self.cwd)?;
        if let Some(name) = &self.name {
            o.serialize_entry("name", name)?;
        }
        if let Some(p) = &self.parent_session_path {
            o.serialize_entry("parentSessionPath", p)?;
        }
        o.serialize_entry("created", &self.created_ms.map(js::iso))?;
        o.serialize_entry("modified", &js::iso(self.modified_ms))?;
        o.serialize_entry("messageCount", &self.message_count)?;
        o.serialize_entry("firstMessage", &self.first_message)?;
        if let Some(t) = &self.all_messages_text {
            o.serialize_entry("allMessagesText", t)?;
        }
        if let Some(g) = &self.gateway {
            o.serialize_entry("gateway", g)?;
        }
        o.end()
    }
}

impl SessionInfo {
    /// The same object as a JSON value.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// A gateway chat's name: the one its gateway shows (for OpenClaw's store, what its
    /// gateway's session list shows), else its subject (a group's title).
    fn gateway_name(&self) -> Option<&str> {
        self.gateway
            .as_ref()
            .and_then(|g| g.display_name.as_deref().or(g.subject.as_deref()))
    }

    /// What pi's picker shows for a row: the name, else a gateway chat's name, else the first
    /// message.
    pub fn title(&self) -> &str {
        self.name
            .as_deref()
            .or(self.gateway_name())
            .unwrap_or(&self.first_message)
    }

    /// The name `--query` matches (pi's `matchSession` reads `session.name`), with a gateway
    /// chat's name after it: the chat is shown by that name, so typing it must find it. A pi
    /// session's is its name alone, as in pi.
    pub fn picker_name(&self) -> std::borrow::Cow<'_, str> {
        match (self.name.as_deref(), self.gateway_name()) {
            (Some(n), Some(g)) if n != g => format!("{n} {g}").into(),
            (n, g) => n.or(g).unwrap_or("").into(),
        }
    }
}
