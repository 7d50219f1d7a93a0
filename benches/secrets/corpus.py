#!/usr/bin/env python3
"""Ordinary code and prose, none of it written here, as pi sessions: every `.py` of the Python
standard library on this machine (its test suite's data folders left out) and the sources of
the crates in the cargo registry (`.rs`, `.md`, `.toml`), each file the text of one `read`
tool result. `pidx secrets` over these sessions counts false positives (precision.sh).

The files are split in two halves by a hash of their path: `tune` (looked at while changing
the rules) and `report` (measured once for the numbers in docs/secrets.md).

usage: corpus.py --out DIR [--half tune|report|all] [--python DIR] [--cargo DIR]
"""

import argparse
import hashlib
import json
import os
import sys
import uuid

EXTS_CARGO = (".rs", ".md", ".toml")
PER_SESSION = 4 << 20  # bytes of text per session file


def python_files(root):
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        # The test suite's data folders hold fixtures made to look odd, not ordinary code.
        dirs[:] = sorted(x for x in dirs if not (rel.startswith("test") and "data" in x)
                         and x not in ("__pycache__", "site-packages", "dist-packages"))
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.join(d, f)


def cargo_files(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in ("target", ".git"))
        for f in sorted(files):
            if f.endswith(EXTS_CARGO):
                yield os.path.join(d, f)


def half_of(path):
    return "tune" if hashlib.sha1(path.encode()).digest()[0] % 2 == 0 else "report"


class Writer:
    def __init__(self, out, cwd):
        self.out, self.cwd, self.n, self.f, self.size = out, cwd, 0, None, 0
        self.t = 1767225600000  # 2026-01-01T00:00:00Z
        self.parent = None

    def iso(self):
        self.t += 1000
        s, ms = divmod(self.t, 1000)
        import time
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + ".%03dZ" % ms

    def line(self, obj):
        self.f.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")

    def open(self):
        self.n += 1
        sid = str(uuid.UUID(int=self.n, version=4))
        d = os.path.join(self.out, "--" + self.cwd.strip("/").replace("/", "-") + "--")
        os.makedirs(d, exist_ok=True)
        ts = self.iso()
        self.f = open(os.path.join(d, ts.replace(":", "-").replace(".", "-", 1) + "_" + sid + ".jsonl"),
                      "w", encoding="utf-8")
        self.line({"type": "session", "version": 3, "id": sid, "timestamp": ts, "cwd": self.cwd})
        self.size, self.parent = 0, None

    def entry(self, message):
        eid = "%08x" % ((self.n << 20) + self.size % (1 << 20) + len(message.get("role", "")) + self.t % 997)
        eid = hashlib.sha1(("%d/%d" % (self.n, self.t)).encode()).hexdigest()[:8]
        ts = self.iso()
        message["timestamp"] = self.t
        self.line({"type": "message", "id": eid, "parentId": self.parent, "timestamp": ts, "message": message})
        self.parent = eid

    def add(self, path, text):
        if self.f is None or self.size > PER_SESSION:
            if self.f:
                self.f.close()
            self.open()
            self.entry({"role": "user", "content": "Read the sources under " + self.cwd + " and summarise them."})
        call = "toolu_" + hashlib.sha1(path.encode()).hexdigest()[:24]
        self.entry({"role": "assistant", "content": [{"type": "toolCall", "id": call, "name": "read",
                                                      "arguments": {"path": path}}],
                    "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                    "usage": {"input": 10, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 20,
                              "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                    "stopReason": "toolUse"})
        self.entry({"role": "toolResult", "toolCallId": call, "toolName": "read",
                    "content": [{"type": "text", "text": text}], "isError": False})
        self.size += len(text.encode())

    def close(self):
        if self.f:
            self.f.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--half", default="all", choices=("tune", "report", "all"))
    ap.add_argument("--python", default="/usr/lib/python3.11")
    ap.add_argument("--cargo", default=os.path.expanduser("~/.cargo/registry/src"))
    a = ap.parse_args()
    total, files = 0, 0
    for name, root, walk in (("python", a.python, python_files), ("cargo", a.cargo, cargo_files)):
        if not os.path.isdir(root):
            print(f"corpus.py: {root} is missing; its part is left out", file=sys.stderr)
            continue
        w = Writer(a.out, "/src/" + name)
        for p in walk(root):
            rel = os.path.relpath(p, root)
            if a.half != "all" and half_of(name + "/" + rel) != a.half:
                continue
            try:
                with open(p, "rb") as f:
                    raw = f.read()
            except OSError:
                continue
            text = raw.decode("utf-8", errors="replace")
            w.add(rel, text)
            total += len(text.encode())
            files += 1
        w.close()
    print(json.dumps({"files": files, "bytes": total}))


if __name__ == "__main__":
    main()
