//! The frame every page shares (head, navigation, the one stylesheet and script) and the small
//! formatting helpers the pages use: ages, dates, numbers, and addresses built from transcript
//! values (percent-encoded, never spliced raw into a URL).

use axum::response::Html;
use maud::{html, Markup, DOCTYPE};

/// Which navigation the page shows.
pub enum Nav<'a> {
    None,
    Top(&'a str),
    /// A session page: its URL segment and which of its views is shown.
    Session(&'a str, &'a str),
}

pub fn layout(title: &str, nav: Nav, body: Markup) -> Html<String> {
    let top = |here: &str| {
        html! {
            a href="/" class=[(here == "sessions").then_some("here")] { "Sessions" }
            a href="/search" class=[(here == "search").then_some("here")] { "Search" }
            a href="/usage" class=[(here == "usage").then_some("here")] { "Usage" }
        }
    };
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="no-referrer";
                title { (title) " · pidx" }
                link rel="icon" href="data:,";
                link rel="stylesheet" href=(super::assets::CSS_URL);
                script src=(super::assets::JS_URL) defer {}
            }
            body {
                nav.top {
                    span.brand { "pidx" }
                    @match nav {
                        Nav::None => (top("")),
                        Nav::Top(here) => (top(here)),
                        Nav::Session(s, here) => {
                            (top(""))
                            span.sep { "·" }
                            a href=(format!("/s/{s}")) class=[(here == "session").then_some("here")] { "Conversation" }
                            a href=(format!("/s/{s}/tree")) class=[(here == "tree").then_some("here")] { "Tree" }
                        }
                    }
                }
                main { (body) }
            }
        }
    };
    Html(markup.into_string())
}

/// A value for a URL path segment or query value.
pub fn enc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// How long ago `ms` was, as pi's picker says it.
pub fn ago(ms: i64) -> String {
    let now = chrono::Utc::now().timestamp_millis();
    let s = (now - ms).max(0) / 1000;
    match s {
        0..=59 => "just now".into(),
        60..=3599 => format!("{}m ago", s / 60),
        3600..=86_399 => format!("{}h ago", s / 3600),
        86_400..=2_591_999 => format!("{}d ago", s / 86_400),
        2_592_000..=31_535_999 => format!("{}mo ago", s / 2_592_000),
        _ => format!("{}y ago", s / 31_536_000),
    }
}

/// An ISO time cut to the minute, for a header.
pub fn when(iso: &str) -> String {
    iso.get(..16).unwrap_or(iso).replace('T', " ")
}

/// A number with thousands separators.
pub fn num(n: i64) -> String {
    crate::term::thousands(n)
}

/// Dollars as the command line writes them (`present::numbers::money`: `$1,234.56`).
pub fn money(v: f64) -> String {
    crate::present::numbers::money(v)
}

/// The file name of a session path (on the team server after its source): its stable address
/// in these pages.
pub fn session_url(path: &str, source: Option<&str>) -> String {
    format!("/s/{}", session_seg(path, source))
}

/// The segment of a session's address (for `Nav::Session`): `FILE`, or `SOURCE%2FFILE` on the
/// team server (one path segment; `web::split_seg` reads it back).
pub fn session_seg(path: &str, source: Option<&str>) -> String {
    let file = enc(crate::query::handle::file_name(path));
    match source {
        Some(s) => format!("{}%2F{file}", enc(s)),
        None => file,
    }
}

/// `?source=NAME` (or `&`, after `sep`) for a page limited to one machine of the team server.
pub fn source_param(sep: char, source: Option<&str>) -> String {
    source.map_or(String::new(), |s| format!("{sep}source={}", enc(s)))
}
