//! Markdown from transcripts as HTML that can do nothing: raw HTML (blocks and inline) is shown
//! as text, links keep only http, https and mailto targets (any other link becomes its text),
//! and images become their alt text with the address as text (a page never loads what a
//! transcript points at). pulldown-cmark escapes every text and attribute it writes.

use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag, TagEnd};

/// Whether a link target may be followed from a page.
pub fn safe_link(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    ["http://", "https://", "mailto:"]
        .iter()
        .any(|p| lower.starts_with(p))
}

/// `text` (already cleaned of secrets and control characters) as safe HTML.
pub fn to_html(text: &str) -> String {
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    // The kind of each open link: dropped ones lose their closing tag too.
    let mut links: Vec<bool> = Vec::new();
    let events = Parser::new_ext(text, opts).filter_map(|ev| match ev {
        Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(raw)),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            let ok = safe_link(&dest_url);
            links.push(ok);
            ok.then_some(Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }))
        }
        Event::End(TagEnd::Link) => links.pop().unwrap_or(false).then_some(ev),
        Event::Start(Tag::Image { dest_url, .. }) => {
            Some(Event::Text(CowStr::from(format!("[image {dest_url}: "))))
        }
        Event::End(TagEnd::Image) => Some(Event::Text("]".into())),
        other => Some(other),
    });
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    html::push_html(&mut out, events);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_is_text_and_unsafe_links_are_dropped() {
        let out = to_html("<script>x()</script>\n\nhi <img src=x onerror=y()> [a](javascript:alert(1)) [b](https://e.org) ![i](data:image/svg+xml,<svg onload=z()>)");
        assert!(!out.contains("<script"), "{out}");
        assert!(!out.contains("<img"), "{out}");
        assert!(!out.contains("href=\"javascript"), "{out}");
        assert!(out.contains("&lt;script&gt;"), "{out}");
        assert!(out.contains("<a href=\"https://e.org\">b</a>"), "{out}");
        assert!(out.contains("a "), "{out}");
    }

    #[test]
    fn code_blocks_keep_their_language_as_a_class() {
        let out = to_html("```rust\nfn main() {}\n```");
        assert!(out.contains("class=\"language-rust\""), "{out}");
    }
}
