"""Writes the fixture sessions of tests/browser/serve.sh: a project with a branched, labelled
session (Markdown, thinking, tool calls of bash/edit/write/read, a failed tool result, a PNG,
a compaction), a long session (300 exchanges, for paging), and hostile sessions whose names,
project, messages, links and images try to run `window.PWNED = 1`, plus a very large line.
Usage: serve_corpus.py ROOT [BIG_LINE_MB]"""
import base64, json, os, sys

root = sys.argv[1]
big_mb = int(sys.argv[2]) if len(sys.argv) > 2 else 50
PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360f8cfc0f01f0005000201a0e6c8d50000000049454e44ae426082")).decode()
PAYLOAD = "window.PWNED=1"


def write(project_dir, name, cwd, sid, entries):
    d = os.path.join(root, project_dir)
    os.makedirs(d, exist_ok=True)
    lines = [{"type": "session", "version": 3, "id": sid, "timestamp": "2026-03-01T08:00:00.000Z", "cwd": cwd}]
    lines += entries
    with open(os.path.join(d, name), "w") as f:
        for l in lines:
            f.write(json.dumps(l) + "\n")


class Chain:
    def __init__(self, prefix):
        self.prefix, self.n, self.parent, self.entries = prefix, 0, None, []

    def add(self, entry, parent="last"):
        self.n += 1
        entry["id"] = "%s%04d" % (self.prefix, self.n)
        entry["parentId"] = self.parent if parent == "last" else parent
        entry["timestamp"] = "2026-03-01T09:%02d:%02d.000Z" % (self.n // 60 % 60, self.n % 60)
        self.entries.append(entry)
        self.parent = entry["id"]
        return entry["id"]

    def msg(self, message, parent="last"):
        message.setdefault("timestamp", 1772355600000 + self.n * 1000)
        return self.add({"type": "message", "message": message}, parent)


def assistant(content, model="sonnet"):
    return {"role": "assistant", "provider": "anthropic", "model": model, "content": content,
            "usage": {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 120, "cost": {"total": 0.01}}}


# 1. A branched session with every kind of message.
c = Chain("a")
c.msg({"role": "user", "content": "Please fix the **flaky** test in `runner.rs`"})
fork = c.msg(assistant([{"type": "thinking", "thinking": "The runner races."},
                        {"type": "text", "text": "Let me look.\n\n```rust\nfn main() {}\n```"},
                        {"type": "toolCall", "id": "t1", "name": "bash", "arguments": {"command": "cargo test runner"}}]))
c.msg({"role": "toolResult", "toolCallId": "t1", "toolName": "bash", "isError": True,
       "content": [{"type": "text", "text": "test failed: timeout\n" * 200}]})
c.msg(assistant([{"type": "toolCall", "id": "t2", "name": "edit",
                  "arguments": {"path": "src/runner.rs", "oldText": "sleep(10)", "newText": "wait_for(ready)"}},
                 {"type": "toolCall", "id": "t3", "name": "write", "arguments": {"path": "NOTES.md", "content": "notes"}}]))
c.msg({"role": "toolResult", "toolCallId": "t2", "toolName": "edit", "content": [{"type": "text", "text": "ok"}]})
c.msg({"role": "user", "content": [{"type": "text", "text": "here is a screenshot"},
                                  {"type": "image", "mimeType": "image/png", "data": PNG}]})
mainleaf = c.msg(assistant([{"type": "text", "text": "The test is fixed: zanzibar-main-branch."}]))
# A branch left earlier, with its own leaf: not the current one (the current leaf is the last entry).
c.parent = fork
c.msg({"role": "user", "content": "try another way: quokka-side-branch"})
side = c.msg(assistant([{"type": "text", "text": "Another way."}]))
c.add({"type": "label", "targetId": side, "label": "side idea"})
c.parent = mainleaf
c.add({"type": "model_change", "provider": "openai", "modelId": "gpt-5"})
c.msg({"role": "user", "content": "thanks, done"})
write("--home-u-alpha--", "2026-03-01T08-00-00-000Z_aaaaaaaa-0000-7000-8000-000000000001.jsonl",
      "/home/u/alpha", "aaaaaaaa-0000-7000-8000-000000000001", c.entries)

# 2. A long session for paging.
c = Chain("l")
for i in range(300):
    c.msg({"role": "user", "content": "question number %d" % i})
    c.msg(assistant([{"type": "text", "text": "answer number %d" % i}]))
c.msg({"role": "user", "content": "the very last message wombat"})
write("--home-u-alpha--", "2026-03-01T07-00-00-000Z_bbbbbbbb-0000-7000-8000-000000000002.jsonl",
      "/home/u/alpha", "bbbbbbbb-0000-7000-8000-000000000002", c.entries)

# 3. Hostile sessions: names, project, Markdown, HTML, links, SVG, escape sequences.
hostile_cwd = '/home/u/evil"><img src=x onerror="%s">' % PAYLOAD
svg = base64.b64encode(('<svg xmlns="http://www.w3.org/2000/svg" onload="%s"><script>%s</script></svg>' % (PAYLOAD, PAYLOAD)).encode()).decode()
c = Chain("h")
c.add({"type": "session_info", "name": "<script>%s</script><b>bold name</b>" % PAYLOAD})
c.msg({"role": "user", "content": "<script>%s</script> and <img src=x onerror=\"%s\"> hostile-marker" % (PAYLOAD, PAYLOAD)})
c.msg(assistant([{"type": "text", "text": "[click me](javascript:%s) [data](data:text/html,<script>%s</script>) "
                  "<a href=\"javascript:%s\">raw</a> ![img](x\" onerror=\"%s) \x1b[31mred\x1b[0m \x1b]0;title\x07 "
                  "<iframe src=\"javascript:%s\"></iframe> [ok](https://example.org)" % ((PAYLOAD,) * 5)},
                 {"type": "toolCall", "id": "x1", "name": "<img src=x onerror=%s>" % PAYLOAD,
                  "arguments": {"path": "<script>%s</script>" % PAYLOAD}}], model="<script>%s</script>" % PAYLOAD))
c.msg({"role": "toolResult", "toolCallId": "x1", "toolName": "<svg onload=%s>" % PAYLOAD,
       "content": [{"type": "text", "text": "</pre><script>%s</script>" % PAYLOAD},
                   {"type": "image", "mimeType": "image/svg+xml", "data": svg},
                   {"type": "image", "mimeType": "image/png", "data": svg}]})
c.msg({"role": "bashExecution", "command": "echo '<script>%s</script>'" % PAYLOAD, "output": "\x1b[2J<b>out</b>", "exitCode": 0})
c.add({"type": "label", "targetId": c.parent, "label": "<img src=x onerror=%s>" % PAYLOAD})
write("--home-u-evil--", "2026-03-01T06-00-00-000Z_cccccccc-0000-7000-8000-000000000003.jsonl",
      hostile_cwd, "cccccccc-0000-7000-8000-000000000003", c.entries)

# 4. A very large line (a tool output of BIG_LINE_MB megabytes).
c = Chain("g")
c.msg({"role": "user", "content": "make a big output"})
c.msg({"role": "toolResult", "toolCallId": "b1", "toolName": "bash",
       "content": [{"type": "text", "text": "<script>%s</script>" % PAYLOAD + "y" * (big_mb << 20)}]})
c.msg(assistant([{"type": "text", "text": "big done"}]))
write("--home-u-evil--", "2026-03-01T05-00-00-000Z_dddddddd-0000-7000-8000-000000000004.jsonl",
      hostile_cwd, "dddddddd-0000-7000-8000-000000000004", c.entries)

# 5. A pi 1.6 session: its system prompt in `sections` (empty `content`), a pasted log a
# Markdown reader would turn into a heading and emphasis, an address, and tool calls whose
# results carry pi 1.x's `durationMs`.
c = Chain("e")
c.msg({"role": "system", "content": "", "sections": {"base": "You are pi, a coding agent. SYSTEM-SECTION-TEXT", "agentsMd": None},
       "toolsAdded": [{"name": "read"}, {"name": "bash"}]})
c.msg({"role": "user", "content": "build log\n=========\n# not a heading\n*not emphasis* and 2 * 3 * 4\n    indented line\nsee https://example.org/x?y=1."})
c.msg(assistant([{"type": "text", "text": "# A heading\n\nSome *emphasis* and `code`."},
                 {"type": "toolCall", "id": "r1", "name": "read", "arguments": {"path": "src/lib.rs"}},
                 {"type": "toolCall", "id": "r2", "name": "edit",
                  "arguments": {"path": "src/lib.rs", "oldText": "fn a() {}", "newText": "fn a() {}\nfn appended() {}"}}], model="claude-opus-4-5-20251101-with-a-very-long-model-name"))
c.msg({"role": "toolResult", "toolCallId": "r1", "toolName": "read", "durationMs": 1234, "content": [{"type": "text", "text": "READ-RESULT-TEXT"}]})
c.msg({"role": "toolResult", "toolCallId": "r2", "toolName": "edit", "durationMs": 40, "content": [{"type": "text", "text": "ok"}]})
c.msg(assistant([{"type": "text", "text": "Done. PLANTED ghp_Zx9Qw3Er7Ty1Ui5Op2As6Df0Gh4Jk8Lz3Xc7"}]))
write("--home-u-beta--", "2026-03-01T04-00-00-000Z_eeeeeeee-0000-7000-8000-000000000005.jsonl",
      "/home/u/beta", "eeeeeeee-0000-7000-8000-000000000005", c.entries)

# 6. An older session, nine days before the others: the days between are quiet.
c = Chain("o")
c.msg({"role": "user", "content": "an older question"})
c.msg(assistant([{"type": "text", "text": "an older answer"}], model="haiku"))
for e in c.entries:
    e["timestamp"] = e["timestamp"].replace("2026-03-01", "2026-02-20")
    e["message"]["timestamp"] -= 9 * 86400000
write("--home-u-beta--", "2026-02-20T09-00-00-000Z_ffffffff-0000-7000-8000-000000000006.jsonl",
      "/home/u/beta", "ffffffff-0000-7000-8000-000000000006", c.entries)
