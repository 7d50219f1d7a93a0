//! What the fuzz targets share: the check that rendered HTML holds no live markup.

/// Why `html` could run something in a browser: a `<script` (or other element that loads or
/// runs content), an `on...=` event handler attribute, or a `javascript:`-like URL in an
/// attribute. Text is escaped by the renderers, so every `<` left in `html` opens a real tag.
pub fn live_markup(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    for tag in [
        "<script", "<iframe", "<object", "<embed", "<svg", "<math", "<style", "<base", "<meta",
    ] {
        if lower.contains(tag) {
            return Some(format!("{tag} element"));
        }
    }
    let bytes = lower.as_bytes();
    let mut i = 0;
    while let Some(open) = lower[i..].find('<') {
        let start = i + open + 1;
        let end = match find_tag_end(bytes, start) {
            Some(e) => e,
            None => return Some(format!("unclosed tag at byte {}", start - 1)),
        };
        if let Some(why) = check_tag(&lower[start..end]) {
            return Some(why);
        }
        i = end + 1;
    }
    None
}

/// The `>` closing the tag that starts at `from`, skipping quoted attribute values.
fn find_tag_end(b: &[u8], from: usize) -> Option<usize> {
    let mut quote = None;
    for (k, &c) in b.iter().enumerate().skip(from) {
        match (quote, c) {
            (None, b'"' | b'\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, b'>') => return Some(k),
            _ => {}
        }
    }
    None
}

/// One tag's inside (without `<` and `>`): its attributes' names and URL values.
fn check_tag(tag: &str) -> Option<String> {
    let b = tag.as_bytes();
    // the tag name
    let mut k = b
        .iter()
        .position(|c| c.is_ascii_whitespace() || *c == b'/')
        .unwrap_or(b.len());
    if tag.starts_with('/') || tag.starts_with('!') {
        return None;
    }
    loop {
        while k < b.len() && (b[k].is_ascii_whitespace() || b[k] == b'/') {
            k += 1;
        }
        if k >= b.len() {
            return None;
        }
        let name_start = k;
        while k < b.len() && !b[k].is_ascii_whitespace() && b[k] != b'=' && b[k] != b'/' {
            k += 1;
        }
        let name = &tag[name_start..k];
        while k < b.len() && b[k].is_ascii_whitespace() {
            k += 1;
        }
        let mut value = "";
        if k < b.len() && b[k] == b'=' {
            k += 1;
            while k < b.len() && b[k].is_ascii_whitespace() {
                k += 1;
            }
            if k < b.len() && (b[k] == b'"' || b[k] == b'\'') {
                let q = b[k];
                let v0 = k + 1;
                k = v0;
                while k < b.len() && b[k] != q {
                    k += 1;
                }
                value = &tag[v0..k.min(b.len())];
                k += 1;
            } else {
                let v0 = k;
                while k < b.len() && !b[k].is_ascii_whitespace() {
                    k += 1;
                }
                value = &tag[v0..k];
            }
        }
        if name.starts_with("on") {
            return Some(format!("event handler attribute {name}="));
        }
        if matches!(
            name,
            "href" | "src" | "action" | "formaction" | "xlink:href" | "srcdoc" | "style"
        ) {
            let url: String = decode_entities(value)
                .chars()
                .filter(|c| !c.is_whitespace() && !c.is_control())
                .collect::<String>()
                .to_ascii_lowercase();
            for scheme in ["javascript:", "vbscript:", "data:"] {
                if url.starts_with(scheme) || (name == "style" && url.contains("url(")) {
                    return Some(format!("{name}={value:?}"));
                }
            }
            if name == "srcdoc" {
                return Some("srcdoc attribute".into());
            }
        }
    }
}

/// Character references as a browser decodes them in an attribute value (the ones that can spell
/// a scheme: decimal, hex and the few named ones an escaper writes).
fn decode_entities(v: &str) -> String {
    let mut out = String::new();
    let mut rest = v;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest.find(';').unwrap_or(rest.len());
        let body = &rest[1..end];
        let ch = if let Some(hex) = body.strip_prefix("#x") {
            u32::from_str_radix(hex, 16).ok().and_then(char::from_u32)
        } else if let Some(dec) = body.strip_prefix('#') {
            dec.parse().ok().and_then(char::from_u32)
        } else {
            match body {
                "amp" => Some('&'),
                "colon" => Some(':'),
                "tab" => Some('\t'),
                "newline" => Some('\n'),
                "quot" => Some('"'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                _ => None,
            }
        };
        match ch {
            Some(c) => {
                out.push(c);
                rest = &rest[(end + 1).min(rest.len())..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::live_markup;

    #[test]
    fn live_markup_is_found_and_escaped_text_is_not() {
        assert!(live_markup("<p>&lt;script&gt; onload=x javascript:1</p>").is_none());
        assert!(live_markup("<a href=\"https://e.org\">x</a>").is_none());
        assert!(live_markup("<SCRIPT>").is_some());
        assert!(live_markup("<p onclick=\"x\">").is_some());
        assert!(live_markup("<a href=\"&#106;avascript:x\">").is_some());
        assert!(live_markup("<a href=\" JavaScript:x\">").is_some());
        assert!(live_markup("<p class=\"a\" title='>' onmouseover=y>").is_some());
    }
}
