//! The web UI's rendering of transcript text: Markdown (with its highlighted code blocks) and
//! whole context messages. Whatever a transcript holds, no `<script` (or other active element),
//! no `on...=` event handler and no `javascript:` URL may come out as markup.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pidx::web::fuzzing::{markdown, message};
use pidx_fuzz::live_markup;
use serde_json::json;

fn check(what: &str, input: &str, html: &str) {
    if let Some(why) = live_markup(html) {
        panic!("{what}: {why}\ninput: {input:?}\nhtml: {html}");
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    check("markdown", &text, &markdown(&text));
    // The input as a message JSON itself, and as the text of each kind of block a page shows.
    check("message", &text, &message(&text, false));
    let t = text.as_ref();
    let messages = [
        json!({"role": "user", "content": t}),
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": t},
            {"type": "text", "text": t},
            {"type": "toolCall", "id": t, "name": "bash", "arguments": {"command": t}},
            {"type": "toolCall", "id": "e", "name": "edit", "arguments": {"path": t, "oldText": t, "newText": "x"}},
            {"type": "toolCall", "id": "w", "name": "write", "arguments": {"path": t, "content": t}},
            {"type": "toolCall", "id": "o", "name": t, "arguments": {"k": t}},
            {"type": "image", "data": t, "mimeType": t}
        ], "provider": t, "model": t, "errorMessage": t}),
        json!({"role": "toolResult", "toolName": t, "isError": true, "content": [{"type": "text", "text": t}]}),
        json!({"role": "bashExecution", "command": t, "output": t, "exitCode": 1}),
        json!({"role": "custom", "customType": t, "content": t}),
        json!({"role": "branchSummary", "fromId": t, "summary": t}),
        json!({"role": "compactionSummary", "summary": t, "tokensBefore": 5}),
    ];
    for m in messages {
        let raw = m.to_string();
        check(
            "message",
            &raw,
            &message(&raw, data.first().is_some_and(|b| b & 1 == 1)),
        );
    }
});
