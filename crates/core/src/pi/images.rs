//! Image blocks (`{"type":"image","data":BASE64,...}` in message content, docs/pi-format.md):
//! the team server is sent a line with each image's data emptied unless images are asked for.

use serde_json::Value;

/// The line with every image block's `data` replaced by `""`, or `None` when it holds none
/// (then the line is sent byte for byte).
pub fn without_images(line: &str) -> Option<String> {
    if !line.contains("\"image\"") {
        return None;
    }
    // Lenient as pi: a line with a lone surrogate still has its images emptied.
    let mut v: Value = crate::pi::line::parse_json(line).ok()?;
    let mut changed = false;
    empty_images(&mut v, &mut changed);
    changed.then(|| v.to_string())
}

fn empty_images(v: &mut Value, changed: &mut bool) {
    match v {
        Value::Array(items) => items.iter_mut().for_each(|i| empty_images(i, changed)),
        Value::Object(m) => {
            let is_image = m.get("type").and_then(Value::as_str) == Some("image");
            if is_image {
                if let Some(Value::String(data)) = m.get_mut("data") {
                    if !data.is_empty() {
                        data.clear();
                        *changed = true;
                    }
                }
            }
            m.values_mut().for_each(|x| empty_images(x, changed));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_data_is_emptied_and_other_lines_are_left_alone() {
        let line = r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"see"},{"type":"image","data":"QUJD","mimeType":"image/png"}]}}"#;
        assert_eq!(
            without_images(line).unwrap(),
            r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"see"},{"type":"image","data":"","mimeType":"image/png"}]}}"#
        );
        assert_eq!(
            without_images(r#"{"type":"message","text":"an image"}"#),
            None
        );
        // A cut emoji (a lone surrogate, as pi writes it) does not keep the image in.
        let cut = r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"see \ud83d"},{"type":"image","data":"QUJD","mimeType":"image/png"}]}}"#;
        assert!(without_images(cut).unwrap().contains(r#""data":"""#));
    }
}
