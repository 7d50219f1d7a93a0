//! The JSONL line parser and entry folding: any bytes, split into lines, folded as ingest folds
//! them. No panic, and the parse is `serde_json`'s (with pi's leniencies: invalid UTF-8 as
//! U+FFFD, lone surrogate escapes accepted, image data skipped).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pidx::pi::line::{parse_line, Line};
use pidx::pi::model::SessionState;
use serde_json::Value;

/// `v` with the `data` of every object that has a `type` emptied. `parse_line` empties an image
/// block's (its `type` read before its `data`); with duplicate keys which one that was differs
/// from the final map, so both sides are compared without any.
fn without_typed_data(v: &mut Value) {
    match v {
        Value::Array(items) => items.iter_mut().for_each(without_typed_data),
        Value::Object(map) => {
            let typed = map.contains_key("type");
            for (k, item) in map.iter_mut() {
                if typed && k == "data" {
                    *item = Value::String(String::new());
                } else {
                    without_typed_data(item);
                }
            }
        }
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let mut state = SessionState::default();
    let mut offset = 0i64;
    for (i, line) in data.split(|&b| b == b'\n').enumerate() {
        let outcome = state.apply_line(line, i as i64 + 1, offset);
        offset += line.len() as i64 + 1;
        if let Some(e) = &outcome.entry {
            assert!(
                e.line == i as i64 + 1,
                "entry of line {} says line {}",
                i + 1,
                e.line
            );
        }
        // Differential: where serde_json alone parses the line, the lenient parse agrees.
        let Ok(text) = std::str::from_utf8(line) else {
            continue;
        };
        let Ok(mut plain) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        without_typed_data(&mut plain);
        match parse_line(line) {
            Line::Value(mut v) => {
                without_typed_data(&mut v);
                assert_eq!(v, plain, "line {text:?}");
            }
            Line::Bad(why) => assert!(
                why.ends_with("value is ignored"),
                "serde_json parses {text:?} but parse_line says {why}"
            ),
            Line::Blank => panic!("serde_json parses {text:?} but parse_line says blank"),
        }
    }
    // The same bytes through the owned-buffer path ingest uses.
    let mut state = SessionState::default();
    for (i, line) in data.split(|&b| b == b'\n').enumerate() {
        let mut buf = line.to_vec();
        state.apply_owned_line(&mut buf, i as i64 + 1, 0);
    }
});
