//! Markdown from transcripts as HTML that can do nothing: raw HTML (blocks and inline) is shown
//! as text, links keep only http, https and mailto targets (any other link becomes its text),
//! and images become their alt text with the address as text (a page never loads what a
//! transcript points at). pulldown-cmark escapes every text and attribute it writes.

use pulldown_cmark::{html, CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd};

use super::highlight;

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
    // A fenced block of a language `highlight` knows: its text, coloured at its end.
    let mut code: Option<(&'static highlight::Lang, String)> = None;
    let events = Parser::new_ext(text, opts).flat_map(|ev| {
        if let (Event::Text(t), Some((_, buf))) = (&ev, code.as_mut()) {
            buf.push_str(t);
            return [None, None];
        }
        if matches!(ev, Event::End(TagEnd::CodeBlock)) {
            if let Some((lang, buf)) = code.take() {
                // Our own markup: every byte of the code escaped by `highlight`.
                let coloured = Event::Html(highlight::highlight(lang, &buf).into());
                return [Some(coloured), Some(ev)];
            }
        }
        [safe(ev, &mut links, &mut code), None]
    });
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    html::push_html(&mut out, events.flatten());
    out
}

/// One Markdown event as a page may show it: raw HTML as text, unsafe links as their text,
/// images as text; a fenced block of a known language starts collecting its code.
fn safe<'a>(
    ev: Event<'a>,
    links: &mut Vec<bool>,
    code: &mut Option<(&'static highlight::Lang, String)>,
) -> Option<Event<'a>> {
    match ev {
        Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(ref info))) => {
            *code = highlight::lang(info).map(|l| (l, String::new()));
            Some(ev)
        }
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
    }
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
    fn code_blocks_keep_their_language_as_a_class_and_are_coloured() {
        let out = to_html("```rust\nfn main() {}\n```");
        assert!(out.contains("class=\"language-rust\""), "{out}");
        assert!(out.contains("<span class=\"hl-k\">fn</span> main"), "{out}");
        let out =
            to_html("```python\n</code></pre><script>x()</script>\n```\n\n```nolang\n<b>\n```");
        assert!(!out.contains("<script") && !out.contains("<b>"), "{out}");
        assert_eq!(out.matches("</pre>").count(), 2, "{out}");
    }
}
