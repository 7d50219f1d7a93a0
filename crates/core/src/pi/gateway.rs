//! Agent gateways (OpenClaw and its rebrands), what their files mean: `agents/<agentId>/sessions/`
//! folders hold pi transcripts next to `sessions.json`, an object mapping each session key to its
//! current transcript (`sessionId`, optional `sessionFile`) and chat metadata; the keys
//! themselves name the agent, channel and chat type. Pure: reading the file is `ingest::gateway`,
//! storing it `store::writer::gateway`.

use std::path::Path;

/// The name gateways give their metadata store.
pub const STORE: &str = "sessions.json";

/// What a session key says about its chat.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct KeyParts {
    pub agent: Option<String>,
    pub channel: Option<String>,
    pub chat_type: Option<&'static str>,
    pub peer: Option<String>,
}

/// Splits a session key: `agent:<agentId>:<mainKey>` (a direct chat),
/// `agent:<agentId>:<channel>[:<account>]:group|channel|room|dm:<id>`, `cron:<jobId>`,
/// `hook:<uuid>`, `agent:<agentId>:subagent:<uuid>`.
pub fn parse_key(key: &str) -> KeyParts {
    let mut parts = KeyParts::default();
    let tokens: Vec<&str> = key.split(':').collect();
    let rest: &[&str] = match tokens.as_slice() {
        ["agent", agent, rest @ ..] => {
            parts.agent = Some((*agent).to_string());
            rest
        }
        all => all,
    };
    let marker = rest
        .iter()
        .position(|t| matches!(*t, "group" | "channel" | "room" | "dm" | "direct"));
    match marker {
        Some(i) => {
            parts.chat_type = Some(match rest[i] {
                "group" => "group",
                "channel" | "room" => "room",
                _ => "direct",
            });
            if i > 0 {
                parts.channel = Some(rest[0].to_string());
            }
            let peer = rest[i + 1..].join(":");
            parts.peer = (!peer.is_empty()).then_some(peer);
        }
        None if rest.len() == 1 && parts.agent.is_some() => parts.chat_type = Some("direct"),
        None if rest.len() >= 2 => parts.channel = Some(rest[0].to_string()),
        None => {}
    }
    parts
}

/// The agent a gateway sessions folder belongs to: `agents/<agentId>/sessions`.
pub fn agent_of(dir: &Path) -> String {
    dir.parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(
        agent: Option<&str>,
        channel: Option<&str>,
        chat: Option<&'static str>,
        peer: Option<&str>,
    ) -> KeyParts {
        KeyParts {
            agent: agent.map(str::to_string),
            channel: channel.map(str::to_string),
            chat_type: chat,
            peer: peer.map(str::to_string),
        }
    }

    #[test]
    fn keys_split_into_agent_channel_chat_type_and_peer() {
        assert_eq!(
            parse_key("agent:main:main"),
            parts(Some("main"), None, Some("direct"), None)
        );
        assert_eq!(
            parse_key("agent:ops:telegram:group:-1001234"),
            parts(
                Some("ops"),
                Some("telegram"),
                Some("group"),
                Some("-1001234")
            )
        );
        assert_eq!(
            parse_key("agent:ops:discord:channel:42"),
            parts(Some("ops"), Some("discord"), Some("room"), Some("42"))
        );
        assert_eq!(
            parse_key("agent:main:slack:room:C1:thread:9"),
            parts(
                Some("main"),
                Some("slack"),
                Some("room"),
                Some("C1:thread:9")
            )
        );
        assert_eq!(
            parse_key("agent:main:telegram:default:dm:user1"),
            parts(
                Some("main"),
                Some("telegram"),
                Some("direct"),
                Some("user1")
            )
        );
        assert_eq!(
            parse_key("cron:nightly"),
            parts(None, Some("cron"), None, None)
        );
        assert_eq!(
            parse_key("hook:0b9e"),
            parts(None, Some("hook"), None, None)
        );
        assert_eq!(
            parse_key("agent:main:subagent:ab-cd"),
            parts(Some("main"), Some("subagent"), None, None)
        );
        assert_eq!(parse_key("global"), parts(None, None, None, None));
    }

    #[test]
    fn the_agent_is_the_folder_above_sessions() {
        assert_eq!(
            agent_of(Path::new("/x/.openclaw/agents/ops/sessions")),
            "ops"
        );
    }
}
