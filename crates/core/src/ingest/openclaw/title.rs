//! The name OpenClaw shows for a session key: its gateway's `resolveGatewaySessionDisplayName`
//! (`src/gateway/session-utils-display.ts` in 2026.9.6), the `displayName` of every row of the
//! gateway's session list, which the Control UI titles the session with. Read from the key's
//! entry (`session_nodes.entry_json`) and the key alone, in OpenClaw's order: the entry's
//! `label` (dashboard chats, cron jobs, hooks and subagents keep their name there, and
//! OpenClaw copies it into `session_windows.display_name`), a group's or channel's title, the
//! entry's `displayName`, its `autoLabel`, the compact group name (`telegram:g-family`), then
//! the delivery origin's label unless it only repeats the route. A dashboard key without any
//! of the first five has no name.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

type Entry = Map<String, Value>;

/// OpenClaw's `normalizeOptionalString`: a string, trimmed, not empty.
fn text(v: Option<&Value>) -> Option<&str> {
    v?.as_str().map(str::trim).filter(|s| !s.is_empty())
}

/// The part of an `agent:<id>:<rest>` key after the agent id (`parseAgentSessionKey`, which
/// lowercases the key first).
fn agent_rest(key: &str) -> Option<String> {
    let key = key.trim().to_lowercase();
    let tail = key.strip_prefix("agent:")?;
    let (agent, rest) = tail.split_once(':')?;
    (!agent.trim().is_empty() && !rest.is_empty() && !rest.starts_with(':')).then(|| rest.into())
}

/// `parseGroupKey`: `<channel>:group|channel:<id>` after the agent prefix.
struct GroupKey {
    channel: String,
    kind: String,
    id: String,
}

fn group_key(key: &str) -> Option<GroupKey> {
    let rest = agent_rest(key).unwrap_or_else(|| key.to_string());
    let parts: Vec<&str> = rest.split(':').filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        [channel, kind, id @ ..] if !id.is_empty() && (*kind == "group" || *kind == "channel") => {
            Some(GroupKey {
                channel: channel.to_string(),
                kind: kind.to_string(),
                id: id.join(":"),
            })
        }
        _ => None,
    }
}

/// `buildGroupDisplayTitle`: `#channel` (after its space), else the subject (or space) and
/// topic joined by ` / `.
fn group_title(
    subject: Option<&str>,
    group_channel: Option<&str>,
    space: Option<&str>,
    topic: Option<&str>,
) -> Option<String> {
    if let Some(gc) = group_channel {
        let label = if gc.starts_with('#') {
            gc.to_string()
        } else {
            format!("#{gc}")
        };
        return Some(match space {
            Some(s) => format!("{s} {label}"),
            None => label,
        });
    }
    let parts: Vec<&str> = [subject.or(space), topic].into_iter().flatten().collect();
    (!parts.is_empty()).then(|| parts.join(" / "))
}

/// `normalizeHyphenSlug` (without its NFC step: stored names are NFC already in practice).
fn hyphen_slug(raw: &str) -> String {
    static OTHER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[^\p{L}\p{M}\p{N}#@._+-]+").expect("valid"));
    static SPACE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s+").expect("valid"));
    static DASHES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"-{2,}").expect("valid"));
    let lower = raw.trim().to_lowercase();
    if lower.is_empty() {
        return String::new();
    }
    let s = SPACE.replace_all(&lower, "-");
    let s = OTHER.replace_all(&s, "-");
    let s = DASHES.replace_all(&s, "-");
    s.trim_matches(|c| c == '-' || c == '.').to_string()
}

/// `shortenGroupId`: ids over 14 characters as their first 6 and last 4.
fn shorten(id: &str) -> String {
    let chars: Vec<char> = id.trim().chars().collect();
    if chars.len() <= 14 {
        return chars.into_iter().collect();
    }
    let head: String = chars[..6].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}...{tail}")
}

/// `buildGroupDisplayName`: `<provider>:<token>`, the token a slug of the chat's title or id,
/// `g-` prefixed unless it is a `#channel` or `@name`.
fn compact_group_name(provider: &str, e: &Entry, id: &str) -> String {
    let provider = provider.trim().to_lowercase();
    let provider = if provider.is_empty() {
        "group".to_string()
    } else {
        provider
    };
    let group_channel = text(e.get("groupChannel"));
    let space = text(e.get("space"));
    let subject = group_title(text(e.get("subject")), None, None, text(e.get("topicName")));
    let detail = match (group_channel, space) {
        (Some(gc), Some(sp)) => format!("{sp}{}{gc}", if gc.starts_with('#') { "" } else { "#" }),
        _ => group_channel
            .map(str::to_string)
            .or(subject)
            .or(space.map(str::to_string))
            .unwrap_or_default(),
    };
    let raw = if detail.is_empty() {
        id.to_string()
    } else {
        detail
    };
    let mut token = hyphen_slug(&raw);
    if token.is_empty() {
        token = hyphen_slug(&shorten(&raw));
    }
    if group_channel.is_none() && token.starts_with('#') {
        token = token.trim_start_matches('#').to_string();
    }
    if !token.is_empty()
        && !token.starts_with(['@', '#'])
        && !token.starts_with("g-")
        && !token.contains('#')
    {
        token = format!("g-{token}");
    }
    if token.is_empty() {
        provider
    } else {
        format!("{provider}:{token}")
    }
}

/// The delivery of an external chat (`entry.delivery` with `kind: "external"`).
fn external_delivery(e: &Entry) -> Option<&Entry> {
    let d = e.get("delivery")?.as_object()?;
    (d.get("kind")?.as_str()? == "external").then_some(d)
}

/// `sessionDeliveryChannel`: the delivery context's channel, else its origin's provider.
fn delivery_channel(e: &Entry) -> Option<String> {
    let d = external_delivery(e)?;
    let from_context = d
        .get("context")
        .and_then(|c| c.get("channel"))
        .filter(|v| !v.is_null());
    let v = from_context.or_else(|| d.get("origin")?.get("provider"))?;
    v.as_str().map(str::to_string)
}

/// The name OpenClaw's gateway shows for `key` with its store entry `e` (None: no name, and
/// OpenClaw's list falls back to a title from the first message, as pidx does).
pub fn shown_name(key: &str, e: &Entry) -> Option<String> {
    if let Some(label) = text(e.get("label")) {
        return Some(label.to_string());
    }
    let parsed = group_key(key);
    let chat_type = e.get("chatType").and_then(Value::as_str);
    let is_group = matches!(chat_type, Some("group" | "channel"))
        || parsed
            .as_ref()
            .is_some_and(|p| p.kind == "group" || p.kind == "channel");
    if is_group {
        let title = group_title(
            text(e.get("subject")),
            text(e.get("groupChannel")),
            text(e.get("space")),
            text(e.get("topicName")),
        );
        if title.is_some() {
            return title;
        }
    }
    let channel = delivery_channel(e).or_else(|| parsed.as_ref().map(|p| p.channel.clone()));
    let id = parsed.as_ref().map(|p| p.id.clone());
    let compact = match (&channel, is_group) {
        (Some(ch), true) => Some(compact_group_name(ch, e, id.as_deref().unwrap_or(key))),
        _ => None,
    };
    let imessage = channel.as_deref() == Some("imessage");
    let display = e.get("displayName").and_then(Value::as_str);
    let display = if imessage && is_group && display.is_some() && display == compact.as_deref() {
        None
    } else {
        display.map(str::to_string)
    };
    let auto = e
        .get("autoLabel")
        .and_then(Value::as_str)
        .map(str::to_string);
    let name = display.or(auto).or(if imessage { None } else { compact });
    if name.is_some() {
        return name.filter(|n| !n.trim().is_empty());
    }
    if agent_rest(key).is_some_and(|r| r.starts_with("dashboard:")) {
        return None;
    }
    origin_label(e, imessage && is_group, id.as_deref())
}

/// The delivery origin's label, unless it is the route's own identity (the sender address, or
/// an e-mail or phone number at its end) or iMessage's generic `group id:<id>`.
fn origin_label(e: &Entry, imessage_group: bool, id: Option<&str>) -> Option<String> {
    let origin = external_delivery(e)?.get("origin")?.as_object()?;
    let label = origin.get("label")?.as_str()?;
    let from = text(origin.get("from"));
    let tail = from.and_then(|f| f.split(':').next_back());
    // `/^[+]?[\d\s().-]+$/`: a phone number.
    let phone = |t: &str| {
        let t = t.strip_prefix('+').unwrap_or(t);
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_digit() || c.is_whitespace() || "().-".contains(c))
    };
    let opaque = tail.is_some_and(|t| t.contains('@') || phone(t));
    let is_route = Some(label) == from || (opaque && Some(label) == tail);
    let generic = imessage_group
        && id.is_some_and(|id| label.to_lowercase() == format!("group id:{}", id.to_lowercase()));
    (!is_route && !generic && !label.trim().is_empty()).then(|| label.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(key: &str, entry: Value) -> Option<String> {
        shown_name(key, entry.as_object().unwrap())
    }

    #[test]
    fn a_label_comes_first_then_a_groups_title_then_the_display_name() {
        let e = serde_json::json!({"label": " Trip planning ", "displayName": "x"});
        assert_eq!(
            shown("agent:main:dashboard:1", e).as_deref(),
            Some("Trip planning")
        );
        let g =
            serde_json::json!({"chatType": "group", "subject": "Groceries", "displayName": "G"});
        assert_eq!(
            shown("agent:s:whatsapp:group:1@g.us", g).as_deref(),
            Some("Groceries")
        );
        let c = serde_json::json!({"groupChannel": "ops", "space": "Acme"});
        assert_eq!(
            shown("agent:o:slack:channel:c1", c).as_deref(),
            Some("Acme #ops")
        );
        let d = serde_json::json!({"chatType": "group", "displayName": "Family group"});
        assert_eq!(
            shown("agent:m:telegram:group:-100", d).as_deref(),
            Some("Family group")
        );
    }

    #[test]
    fn a_group_without_a_name_gets_its_compact_name_and_a_dashboard_none() {
        let e = serde_json::json!({"chatType": "channel"});
        assert_eq!(
            shown("agent:ops:slack:channel:C042", e).as_deref(),
            Some("slack:g-c042")
        );
        assert_eq!(shown("agent:m:dashboard:abc", serde_json::json!({})), None);
        assert_eq!(
            shown("agent:m:main", serde_json::json!({"autoLabel": "Auto"})).as_deref(),
            Some("Auto")
        );
    }

    #[test]
    fn an_origin_label_unless_it_is_the_route_itself() {
        let with = |label: &str, from: &str| {
            serde_json::json!({"delivery": {"kind": "external",
                "context": {"channel": "telegram"},
                "origin": {"provider": "telegram", "label": label, "from": from}}})
        };
        assert_eq!(
            shown("agent:m:telegram:direct:5", with("Ana", "telegram:5")).as_deref(),
            Some("Ana")
        );
        assert_eq!(
            shown(
                "agent:m:telegram:direct:5",
                with("telegram:5", "telegram:5")
            ),
            None
        );
        assert_eq!(
            shown("agent:m:x:direct:5", with("+351 912", "sms:+351 912")),
            None
        );
        assert_eq!(
            shown("agent:m:x:direct:5", with("a@b.c", "mail:a@b.c")),
            None
        );
    }
}
