"""`pidx mcp` driven by the official MCP Python SDK over stdio, checked against the CLI.

Usage: client_check.py PIDX_BINARY CORPUS_ROOT [--pg WRITER_URL READER_URL]

Every tool is called on the conformance corpus (plus one generated large session in a temp
dir) and its answer compared with `pidx ... --json` for the same question: search hits, list
rows, show, tree, stats, sql, and pi's context messages at a dozen sessions and leaves, paged
with cursors forwards and from the end. Then bad arguments, an unknown session, and a
cancelled call after which the server must still answer. Then a session of freshly planted
secrets: no answer may show one, whatever an agent searches, reads or queries (the CLI
answers compared with are `--redact`ed, as MCP answers are). Prints one line per failure and
'N passed, N failed' at the end; exits 1 on any failure.

With --pg the same sessions are pushed to a team server (WRITER_URL, as source "alpha") and
`pidx --pg READER_URL mcp` is checked against `pidx --pg READER_URL ... --json`: the same
questions, the same secrets; the tools that read only the local machine (sql_query,
file_history, blame) and `meaning` answer one sentence; freshness is the local run's (a
pushed server has no files to follow). A call the server keeps waiting (behind a lock this
check holds through PIDX_PG_ADMIN, a superuser's URL) must stop at the call's 10 s limit, and
one the client abandons must have its statement cancelled on the server at once.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time

import jsonschema
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

PIDX, CORPUS = sys.argv[1], os.path.abspath(sys.argv[2])
PG = sys.argv[4:6] if sys.argv[3:4] == ["--pg"] else None
sys.setrecursionlimit(50000)  # `pidx tree --json` of the 2,400-deep generated session nests that deep
TMP = tempfile.mkdtemp(prefix="pidx-mcp-")
BIG_ROOT = os.path.join(TMP, "big")
BIG_ID = "0b16b16b-0000-7000-8000-00000000b16b"
LOCAL = ["--root", CORPUS, "--root", BIG_ROOT, "--db", os.path.join(TMP, "index.db")]
GLOBAL = ["--pg", PG[1]] if PG else LOCAL
ENV = {**os.environ, "HOME": TMP, "PI_CODING_AGENT_DIR": os.path.join(TMP, "agent"), "NO_COLOR": "1"}

ERRLOG = os.path.join(TMP, "server-stderr.log")
passed, failed = 0, 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {what}", flush=True)


def write_big_session():
    """A 2,400-entry session with long tool outputs (some longer than a page), written by
    this test into its own temp root (pidx itself never writes a session file)."""
    folder = os.path.join(BIG_ROOT, "--tmp-big--")
    os.makedirs(folder)
    lines = [{"type": "session", "version": 3, "id": BIG_ID,
              "timestamp": "2026-03-01T00:00:00.000Z", "cwd": "/tmp/big"}]
    parent = None
    for i in range(2400):
        ts_ms = 1772323200000 + i * 1000
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts_ms / 1000)) + ".000Z"
        kind = i % 3
        if kind == 0:
            msg = {"role": "user", "content": f"step {i}: look at módulo {i} ✓", "timestamp": ts_ms}
        elif kind == 1:
            msg = {"role": "assistant", "content": [
                {"type": "text", "text": f"Reading file {i}."},
                {"type": "toolCall", "id": f"call{i}", "name": "read", "arguments": {"path": f"src/f{i}.rs"}}],
                "provider": "anthropic", "model": "claude-sonnet-4-5", "api": "anthropic-messages",
                "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                          "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                "stopReason": "toolUse", "timestamp": ts_ms}
        else:
            size = 45000 if i % 30 == 2 else 300 + (i % 7) * 100
            body = (f"line {i} of output — ünïcode\n" * (size // 28 + 1))[:size]
            msg = {"role": "toolResult", "toolCallId": f"call{i - 1}", "toolName": "read",
                   "content": [{"type": "text", "text": body}], "isError": False, "timestamp": ts_ms}
        eid = f"{i:08x}"
        lines.append({"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": msg})
        parent = eid
    path = os.path.join(folder, "2026-03-01T00-00-00-000Z_" + BIG_ID + ".jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")


def cli(*args):
    """The CLI's --json answer (None when it found nothing), redacted as MCP answers are."""
    p = subprocess.run([PIDX, *GLOBAL, *args, "--json", "--redact"], capture_output=True, text=True, env=ENV)
    if p.returncode == 1:
        return None
    if p.returncode != 0:
        raise RuntimeError(f"pidx {' '.join(args)} failed: {p.stderr.strip()}")
    return json.loads(p.stdout)


# Each tool's outputSchema (filled by check_tools); every answer is validated against it.
OUTPUT_SCHEMAS = {}


async def call(s, tool, **args):
    r = await s.call_tool(tool, args)
    if r.is_error:
        return None, r.content[0].text if r.content else ""
    schema = OUTPUT_SCHEMAS.get(tool)
    if schema is not None:
        errors = list(jsonschema.Draft202012Validator(schema).iter_errors(r.structured_content))
        check(not errors, f"{tool} {args}: the answer does not validate against its outputSchema: "
                          f"{errors[0].message if errors else ''}")
    return r.structured_content, None


async def call_ok(s, tool, **args):
    value, err = await call(s, tool, **args)
    check(err is None, f"{tool} {args} answered an error: {err}")
    return value or {}


async def all_pages(s, tool, key, **args):
    """Every row of a paged answer, following nextCursor."""
    rows, cursor, pages = [], None, 0
    while True:
        extra = {"cursor": cursor} if cursor else {}
        v = await call_ok(s, tool, **args, **extra)
        rows.extend(v.get(key, []))
        pages += 1
        cursor = v.get("nextCursor")
        check(bool(v.get("truncated")) == bool(cursor), f"{tool}: truncated agrees with nextCursor")
        if not cursor or pages > 10000:
            return rows, pages


def join_pieces(items, backwards=False):
    """Messages from page items: pieces of one message (from/to/total) joined in order."""
    out, open_piece = [], None
    for it in items:
        if "total" in it and open_piece is not None and open_piece["entryId"] == it["entryId"] and \
                open_piece["role"] == it["role"] and open_piece["to"] == it["from"]:
            open_piece["text"] += it["text"]
            open_piece["to"] = it["to"]
            if it["to"] == it["total"]:
                out.append(open_piece["text"])
                open_piece = None
            continue
        if "total" in it:
            open_piece = dict(it)
            if it["to"] == it["total"]:
                out.append(it["text"])
                open_piece = None
            continue
        out.append(it["text"])
    return out


async def context_pages(s, session, leaf=None, from_end=False, fmt="json", max_chars=None):
    items, cursor, pages = [], None, []
    while True:
        args = {"session": session, "format": fmt, "from_end": from_end}
        if leaf:
            args["leaf"] = leaf
        if max_chars:
            args["max_chars"] = max_chars
        if cursor:
            args["cursor"] = cursor
        v = await call_ok(s, "get_context", **args)
        msgs = v.get("messages", [])
        check(sum(len(m["text"]) for m in msgs) <= (max_chars or 20000),
              f"get_context page of {session} keeps to its budget")
        pages.append(msgs)
        cursor = v.get("nextCursor")
        if not cursor or len(pages) > 5000:
            break
    if from_end:
        pages.reverse()
    for p in pages:
        items.extend(p)
    return items, len(pages)


async def check_tools(s):
    tools = (await s.list_tools()).tools
    names = {t.name for t in tools}
    expected = {"search_sessions", "list_sessions", "get_session", "get_context", "get_tree",
                "usage_stats", "sql_query", "file_history", "blame"}
    check(names == expected, f"tools/list names: {sorted(names)}")
    for t in tools:
        check(t.input_schema.get("type") == "object", f"{t.name} has an object inputSchema")
        try:
            jsonschema.Draft202012Validator.check_schema(t.input_schema)
            check(True, "")
        except jsonschema.SchemaError as e:
            check(False, f"{t.name}'s inputSchema is not a valid JSON Schema: {e.message}")
        check(len(t.description or "") > 150, f"{t.name} has a paragraph of description")
        out = t.output_schema
        check(isinstance(out, dict) and out.get("type") == "object", f"{t.name} has an object outputSchema")
        try:
            jsonschema.Draft202012Validator.check_schema(out or {})
            OUTPUT_SCHEMAS[t.name] = out
        except jsonschema.SchemaError as e:
            check(False, f"{t.name}'s outputSchema is not a valid JSON Schema: {e.message}")
    # A schema that accepts anything would check nothing: a broken answer must fail it.
    broken = {"sessions": "not a list", "truncated": "no"}
    for name in ("list_sessions", "search_sessions"):
        check(not jsonschema.Draft202012Validator(OUTPUT_SCHEMAS.get(name, {"type": "null"})).is_valid(broken),
              f"{name}'s outputSchema rejects a malformed answer")


async def check_list_and_search(s):
    rows, _ = await all_pages(s, "list_sessions", "sessions", all=True, limit=7, max_chars=3000)
    want = cli("list", "--all")
    check(rows == want, f"list_sessions all (paged by 7) equals `pidx list --all` ({len(rows)} vs {len(want)} rows)")
    cwd = want[2]["cwd"]
    mine, _ = await all_pages(s, "list_sessions", "sessions", cwd=cwd)
    check(mine == cli("list", "--cwd", cwd), "list_sessions cwd equals `pidx list --cwd`")
    mine, _ = await all_pages(s, "list_sessions", "sessions", all=True, query="parse header")
    check(mine == cli("list", "--all", "--query", "parse header"), "list_sessions query equals `pidx list --query`")
    cases = [("build", {}, []),
             ("parse_header", {"literal": True}, ["--literal"]),
             ("README OR json", {"kinds": ["user"]}, ["--in", "user"]),
             ("b[a-z]+d", {"regex": True}, []),
             ("look", {"session": BIG_ID}, ["--session", BIG_ID])]
    for q, extra, cli_extra in cases:
        limit = 300 if "session" in extra else 40
        groups, pages = await all_pages(s, "search_sessions", "sessions", query=q, limit=limit, max_chars=1500, **extra)
        flat = [{**{k: g[k] for k in ("path", "sessionId", "cwd", "sessionName")}, **h}
                for g in groups for h in g["hits"]]
        text = "re:" + q if extra.get("regex") else q
        want = cli("search", text, *cli_extra, "--limit", str(limit)) or []
        check(len(flat) > 0, f"search_sessions {q!r} finds something")
        # bm25 scores carry a recency factor, so two runs a moment apart differ in the 9th digit.
        same = len(flat) == len(want) and all(
            {**h, "score": 0} == {**w, "score": 0} and abs(h["score"] - w["score"]) < 1e-6 * max(1, abs(w["score"]))
            for h, w in zip(flat, want))
        check(same, f"search_sessions {q!r} {extra} limit {limit} equals `pidx search` "
                            f"({len(flat)} vs {len(want)} hits, {pages} pages)")


async def check_sessions(s):
    listing = cli("list", "--all")
    # Over --pg every page is a server round trip: half the sessions, and the big one at one
    # leaf (its default leaf is paged locally), keep the check near a minute.
    ids = [r["id"] for r in listing if isinstance(r.get("id"), str) and r["messageCount"] > 2][:6 if PG else 12]
    checked = 0
    for sid in ids + [BIG_ID]:
        show = cli("show", sid)
        got = await call_ok(s, "get_session", session=sid)
        check({k: v for k, v in got.items() if k not in ("truncated", "notes")} == show,
              f"get_session {sid} equals `pidx show --json`")
        tree = cli("tree", sid) or []
        nodes, stack = [], list(tree)
        while stack:
            n = stack.pop()
            nodes.append(n)
            stack.extend(n["children"])
        segs, _ = await all_pages(s, "get_tree", "segments", session=sid, max_chars=1000)
        check(sum(g["entries"] for g in segs) == len(nodes), f"get_tree {sid} segments cover every entry")
        check(sum(1 for g in segs if g["current"]) == 1, f"get_tree {sid} has one current segment")
        leaves = [None] + [g["lastId"] for g in segs[:3]] + [n["id"] for n in nodes[1:3]]
        if sid == BIG_ID:
            leaves = [nodes[1500]["id"]] if PG else [None, nodes[1500]["id"]]
        for leaf in dict.fromkeys(leaves):
            extra = ["--leaf", leaf] if leaf else []
            want = [json.loads(json.dumps(m)) for m in cli("context", sid, *extra)["messages"]]
            budget = 1000 if sid != BIG_ID else 50000
            items, pages = await context_pages(s, sid, leaf, max_chars=budget)
            got = [json.loads(t) for t in join_pieces(items)]
            check(got == want, f"get_context {sid} leaf {leaf} equals `pidx context` ({len(got)} vs {len(want)} messages, {pages} pages)")
            back, _ = await context_pages(s, sid, leaf, from_end=True, max_chars=budget)
            got = [json.loads(t) for t in join_pieces(back)]
            check(got == want, f"get_context {sid} leaf {leaf} from_end pages join to `pidx context`")
            text, _ = await context_pages(s, sid, leaf, fmt="text")
            check([m["role"] for m in text if "from" not in m or m["from"] == 0] == [m.get("role") for m in want],
                  f"get_context {sid} text roles follow `pidx context`")
            checked += 1
    check(checked >= 10, f"contexts compared at {checked} sessions and leaves (>= 10)")


async def check_figures(s):
    rows, _ = await all_pages(s, "usage_stats", "rows", by=["month", "model"], tz="UTC")
    check(rows == cli("stats", "--by", "month", "--by", "model", "--tz", "UTC"), "usage_stats equals `pidx stats`")
    q = "SELECT id, cwd, message_count FROM v_sessions ORDER BY path"
    if PG:
        for tool, args in (("sql_query", {"query": q}), ("file_history", {"path": "/tmp"}),
                           ("blame", {"path": PIDX})):
            value, err = await call(s, tool, **args)
            check(value is None and err and "team server" in err and "\n" not in err,
                  f"{tool} over --pg answers one sentence naming the team server: {err!r}")
        value, err = await call(s, "search_sessions", query="build", meaning=True)
        check(value is None and err and "team server" in err, f"meaning over --pg says why not: {err!r}")
        # Without tz the server's periods are UTC's, as `pidx --pg URL stats` (it cannot know
        # this machine's zone).
        rows, _ = await all_pages(s, "usage_stats", "rows", by=["day"])
        check(rows == cli("stats", "--by", "day"), "usage_stats without tz over --pg equals `pidx --pg stats`")
        rows, _ = await all_pages(s, "usage_stats", "rows", by=["source", "model"])
        check(rows and rows == cli("stats", "--by", "source", "--by", "model"),
              "usage_stats by source over --pg equals `pidx --pg stats --by source`")
        return
    value, err = await call(s, "usage_stats", by=["source"])
    check(value is None and err and "--pg" in err and "\n" not in err,
          f"usage_stats by source locally names the team server: {err!r}")
    rows, pages = await all_pages(s, "sql_query", "rows", query=q, max_rows=10)
    check(rows == cli("sql", q) and pages > 1, f"sql_query paged by 10 equals `pidx sql` ({pages} pages)")


async def check_errors(s):
    cases = [("get_context", {"session": "019cc"}, "matches"),
             ("get_context", {}, "session"),
             ("search_sessions", {"query": "x", "limit": "many"}, "limit"),
             ("search_sessions", {"query": "x", "nope": 1}, "nope"),
             ("list_sessions", {"all": True, "max_chars": 5}, "max_chars"),
             ("list_sessions", {"all": True, "cursor": "get_tree:3"}, "cursor"),
             ("usage_stats", {"by": ["fortnight"]}, "fortnight"),
             ("search_sessions", {"query": "x", "since": "yesterday"}, "date"),
             ("sql_query", {"query": "DELETE FROM files"}, "team server" if PG else "read-only"),
             ("get_context", {"session": BIG_ID, "leaf": "nothere"}, "entry"),
             ("no_such_tool", {}, "tools")]
    for tool, args, word in cases:
        value, err = await call(s, tool, **args)
        check(err is not None and "\n" not in err.strip() and word in err,
              f"{tool} {args} is a one-line tool error mentioning {word!r}: {err!r}")
    if not PG:  # the server plans its own query: no note of what it read
        v = await call_ok(s, "search_sessions", query=r"\d+", regex=True, limit=3)
        check(any("every text was read" in n for n in v.get("notes", [])),
              f"a regex no word narrows says it read every text: {v.get('notes')!r}")
        v = await call_ok(s, "search_sessions", query=r"fn\s+\w+", regex=True, limit=3)
        check(not any("every text was read" in n for n in v.get("notes", [])),
              f"a regex with a required word does not: {v.get('notes')!r}")
    value, err = await call(s, "get_session", session="e5ce5ce5")
    check(err is not None and "matches 2 sessions" in err and "evil" in err
          and not any(c in err for c in "\x1b\x07\x9b\n"),
          f"an ambiguous prefix lists the hostile names neutralised, on one line: {err!r}")
    value, err = await call(s, "get_session", session="ffffffff-nope")
    check(err is not None and "session id" in err and "path" in err,
          f"an unknown session says which handles are accepted: {err!r}")


async def check_cancel(s):
    """A call that would run until the time limit is abandoned (the SDK then sends
    notifications/cancelled); the server says it stopped it and answers the next call at once."""
    slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    task = asyncio.create_task(s.call_tool("sql_query", {"query": slow}))
    await asyncio.sleep(0.5)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    t0 = time.monotonic()
    v = await call_ok(s, "list_sessions", all=True, limit=1)
    check(len(v.get("sessions", [])) == 1 and time.monotonic() - t0 < 3,
          f"the server answers right after a cancellation ({time.monotonic() - t0:.2f} s)")
    for _ in range(30):
        if "sql_query call was cancelled" in open(ERRLOG, encoding="utf-8").read():
            break
        await asyncio.sleep(0.1)
    check("sql_query call was cancelled" in open(ERRLOG, encoding="utf-8").read(),
          "the server saw the cancellation and stopped the call (its stderr says so)")


async def check_time_limit(s):
    """A query that would never end is stopped at the time limit with a sentence saying so."""
    t0 = time.monotonic()
    value, err = await call(s, "sql_query", query="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c")
    took = time.monotonic() - t0
    check(err is not None and "longer than 10 s" in err and 9 < took < 15,
          f"an endless query is stopped at the 10 s limit ({took:.1f} s): {err!r}")


def admin_psql(*args, **kw):
    """psql as the server's superuser (PIDX_PSQL, PIDX_PG_ADMIN: tests/mcp/run.sh sets both)."""
    return subprocess.Popen([os.environ["PIDX_PSQL"], "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                             os.environ["PIDX_PG_ADMIN"], *args], text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, **kw)


def reads_waiting():
    """How many of the reader role's statements are waiting for a lock on the server."""
    p = admin_psql("-c", "SELECT count(*) FROM pg_stat_activity "
                   "WHERE usename = 'pidx_reader' AND wait_event_type = 'Lock'")
    out, _ = p.communicate(timeout=30)
    return int(out.strip())


async def check_pg_stop(s):
    """Over --pg, a call the server keeps waiting is cancelled there at the call's 10 s limit
    (the server's own statement limit is twice that), and a call the client abandons has its
    statement cancelled on the server at once, not left waiting for a limit."""
    lock = admin_psql()
    lock.stdin.write("BEGIN;\nLOCK TABLE sources IN ACCESS EXCLUSIVE MODE;\n\\echo locked\n")
    lock.stdin.flush()
    check(lock.stdout.readline().strip() == "locked", "the check holds a lock on sources")
    try:
        t0 = time.monotonic()
        value, err = await call(s, "search_sessions", query="zebra")
        took = time.monotonic() - t0
        check(err is not None and "longer than 10 s" in err and 9 < took < 15,
              f"a call behind a lock is stopped at its 10 s limit over --pg ({took:.1f} s): {err!r}")
        task = asyncio.create_task(s.call_tool("search_sessions", {"query": "zebra"}))
        for _ in range(50):
            if reads_waiting() > 0:
                break
            await asyncio.sleep(0.1)
        check(reads_waiting() == 1, "the second call waits for the lock on the server")
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        t0, waiting = time.monotonic(), None
        for _ in range(30):
            waiting = reads_waiting()
            if waiting == 0:
                break
            await asyncio.sleep(0.1)
        check(waiting == 0, f"an abandoned call's statement is cancelled on the server at once "
              f"({waiting} still waiting after {time.monotonic() - t0:.1f} s)")
    finally:
        lock.stdin.write("ROLLBACK;\n")
        lock.stdin.close()
        lock.wait(timeout=30)
    t0 = time.monotonic()
    v = await call_ok(s, "list_sessions", all=True, limit=1)
    check(len(v.get("sessions", [])) == 1 and time.monotonic() - t0 < 3,
          f"the server answers right after ({time.monotonic() - t0:.2f} s)")


def fresh_session(folder, sid, words):
    """A small session file written by this test into its temp root, one user message a word."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"2026-03-02T00-00-00-000Z_{sid}.jsonl")
    with open(path, "a", encoding="utf-8") as f:
        if f.tell() == 0:
            f.write(json.dumps({"type": "session", "version": 3, "id": sid,
                                "timestamp": "2026-03-02T00:00:00.000Z", "cwd": "/tmp/fresh"}) + "\n")
        for i, w in enumerate(words):
            f.write(json.dumps({"type": "message", "id": f"{w[:4]}{i:04d}", "parentId": None,
                                "timestamp": "2026-03-02T00:00:01.000Z",
                                "message": {"role": "user", "content": f"note {w}", "timestamp": 1772409601000}}) + "\n")
    return path


async def check_freshness(s):
    """Files written while the server runs are in the next call's answers: a new project folder
    with a session, an append to it, an append to an existing session, a deletion. The call
    before each change has just checked every file or followed the events, so each answer
    comes from the file events the server follows (a full check runs once a minute)."""
    async def found(word):
        v = await call_ok(s, "search_sessions", query=word, literal=True)
        return sum(len(g["hits"]) for g in v.get("sessions", []))
    check(await found("zebrafresh") == 0, "the fresh word is nowhere before it is written")
    path = fresh_session(os.path.join(BIG_ROOT, "--tmp-fresh--"), "0f0f0f0f-0000-7000-8000-00000000f0f0", ["zebrafresh"])
    check(await found("zebrafresh") == 1, "a session written in a new project folder is found by the next call")
    fresh_session(os.path.join(BIG_ROOT, "--tmp-fresh--"), "0f0f0f0f-0000-7000-8000-00000000f0f0", ["zebrafresh", "yakfresh"])
    check(await found("zebrafresh") == 2 and await found("yakfresh") == 1, "lines appended to it are found by the next call")
    big = os.path.join(BIG_ROOT, "--tmp-big--")
    before = (await call_ok(s, "get_session", session=BIG_ID)).get("entries")
    with open(os.path.join(big, os.listdir(big)[0]), "a", encoding="utf-8") as f:
        f.write(json.dumps({"type": "message", "id": "fresh001", "parentId": None, "timestamp": "2026-03-02T00:00:02.000Z",
                            "message": {"role": "user", "content": "walrusfresh", "timestamp": 1772409602000}}) + "\n")
    after = (await call_ok(s, "get_session", session=BIG_ID)).get("entries")
    check(isinstance(before, int) and after == before + 1 and await found("walrusfresh") == 1,
          f"an append to an existing session is in the next call ({before} -> {after} entries)")
    os.remove(path)
    check(await found("zebrafresh") == 0, "a deleted session is gone from the next call")


def write_hostile_sessions():
    """Two sessions whose ids share a prefix and whose names carry terminal escapes."""
    folder = os.path.join(BIG_ROOT, "--tmp-hostile--")
    os.makedirs(folder)
    for n in (1, 2):
        sid = f"e5ce5ce5-0000-7000-8000-00000000000{n}"
        lines = [{"type": "session", "version": 3, "id": sid,
                  "timestamp": "2026-03-01T00:00:00.000Z", "cwd": "/tmp/hostile"},
                 {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-03-01T00:00:01.000Z",
                  "message": {"role": "user", "content": "hello", "timestamp": 1772323201000}},
                 {"type": "session_info", "id": "n1", "parentId": "u1", "timestamp": "2026-03-01T00:00:02.000Z",
                  "name": f"evil\x1b]0;owned\x07\x1b[31m{n}\x9b2J"}]
        with open(os.path.join(folder, f"2026-03-01T00-00-0{n}-000Z_{sid}.jsonl"), "w", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")


SECRETS_ID = "5ec5ec5e-0000-7000-8000-000000000036"


def planted_secrets():
    """Freshly generated secrets of several kinds, each as it is written in a transcript:
    [(rule, secret, text around it)]."""
    import random
    import string
    rnd = random.Random()
    alnum = string.ascii_letters + string.digits
    tok = lambda n, a=alnum: "".join(rnd.choice(a) for _ in range(n))
    key_body = "\n".join(tok(64, alnum + "+/") for _ in range(4))
    return [
        ("aws-access-key", "AKIA" + tok(16, string.ascii_uppercase + string.digits), "aws_access_key_id = {}"),
        ("github-token", "ghp_" + tok(36), "git clone https://{}@github.com/acme/api.git"),
        ("anthropic-key", "sk-ant-api03-" + tok(93, alnum + "_-") + "AA", "export ANTHROPIC_API_KEY={}"),
        ("openai-key", "sk-proj-" + tok(64, alnum + "_-"), "client = OpenAI(api_key=\"{}\")"),
        ("slack-token", "xoxb-" + tok(12, string.digits) + "-" + tok(24), "SLACK token {}"),
        ("private-key", f"-----BEGIN RSA PRIVATE KEY-----\n{key_body}\n-----END RSA PRIVATE KEY-----", "$ cat ~/.ssh/id_rsa\n{}"),
        ("url-password", tok(18), "psql postgres://app:{}@db.internal:5432/prod"),
        ("env-secret", tok(32), "$ cat .env\nPORT=3000\nJWT_SECRET={}\nLOG=debug"),
        ("auth-header", tok(40), "curl -H \"Authorization: Bearer {}\" https://api.acme.io/v1"),
    ]


def write_secret_session(planted):
    """One session whose prompts and tool outputs hold every planted secret."""
    folder = os.path.join(BIG_ROOT, "--tmp-secrets--")
    os.makedirs(folder)
    lines = [{"type": "session", "version": 3, "id": SECRETS_ID,
              "timestamp": "2026-03-02T00:00:00.000Z", "cwd": "/tmp/secrets"}]
    parent = None
    for i, (rule, secret, written) in enumerate(planted):
        text = f"why does the rollout fail? {written.format(secret)}\nit answers 401"
        if i % 2 == 0:
            msg = {"role": "user", "content": text, "timestamp": 1772409600000 + i}
        else:
            msg = {"role": "toolResult", "toolCallId": f"c{i}", "toolName": "bash",
                   "content": [{"type": "text", "text": text}], "isError": False, "timestamp": 1772409600000 + i}
        eid = f"5e{i:06x}"
        lines.append({"type": "message", "id": eid, "parentId": parent,
                      "timestamp": f"2026-03-02T00:00:{i:02d}.000Z", "message": msg})
        parent = eid
    with open(os.path.join(folder, f"2026-03-02T00-00-00-000Z_{SECRETS_ID}.jsonl"), "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")


async def check_secrets(s, planted):
    """No answer holds a planted secret, whatever an agent asks for."""
    pieces = [(rule, p) for rule, secret, _ in planted for p in secret.split("\n") if len(p) >= 8 and not p.startswith("-----")]

    def clean(what, value):
        text = json.dumps(value)
        leaked = [rule for rule, p in pieces if p in text]
        check(not leaked, f"{what}: an answer shows a planted secret ({leaked})")

    for rule, secret, _ in planted:
        first = secret.split("\n")[1 if rule == "private-key" else 0]
        for literal in (True, False):
            v = await call_ok(s, "search_sessions", query=first, literal=literal)
            clean(f"search_sessions for the {rule} itself (literal={literal})", v)
            check(v.get("hitCount") == 0, f"search_sessions finds nothing by the {rule} itself (literal={literal})")
    # An agent steered to hunt for keys.
    for q in ("AKIA", "ghp_", "sk-ant", "BEGIN RSA PRIVATE KEY", "re:AKIA[A-Z0-9]{16}", "re:ghp_[A-Za-z0-9]+"):
        regex = q.startswith("re:")
        v = await call_ok(s, "search_sessions", query=q[3:] if regex else q, regex=regex)
        clean(f"search_sessions {q!r}", v)
    v = await call_ok(s, "search_sessions", query="rollout fail", session=SECRETS_ID)
    check(v.get("hitCount", 0) >= len(planted), f"the words around secrets still find their entries ({v.get('hitCount')})")
    clean("search_sessions around secrets", v)
    for fmt in ("json", "text"):
        for from_end in (False, True):
            items, pages = await context_pages(s, SECRETS_ID, from_end=from_end, fmt=fmt, max_chars=1000)
            clean(f"get_context {fmt} from_end={from_end} ({pages} pages)", items)
            check(any("[redacted: " in json.dumps(i) for i in items), f"get_context {fmt} shows where secrets were")
    clean("list_sessions", await call_ok(s, "list_sessions", all=True, query="rollout"))
    clean("get_session", await call_ok(s, "get_session", session=SECRETS_ID))
    clean("get_tree", await call_ok(s, "get_tree", session=SECRETS_ID))
    if PG:
        return
    for q in ("SELECT text FROM entries", "SELECT first_message FROM v_sessions",
              "SELECT path FROM entries e JOIN files f ON f.id = e.file_id WHERE e.text LIKE '%AKIA%'"):
        v = await call_ok(s, "sql_query", query=q, max_rows=1000)
        clean(f"sql_query {q!r}", v)
    v = await call_ok(s, "sql_query", query="SELECT count(*) AS n FROM entries e WHERE e.text LIKE '%ghp_%'")
    check(v.get("rows") == [{"n": 0}], f"sql_query cannot tell where a secret is: {v.get('rows')}")
    for q in ("SELECT term FROM fts_vocab", "SELECT rowid FROM fts WHERE fts MATCH 'ghp'", "SELECT rev FROM words",
              "SELECT term FROM impact_terms", "SELECT term FROM impact_blocks"):
        v, err = await call(s, "sql_query", query=q)
        check(v is None and err, f"sql_query refuses the full-text tables: {q!r}")


async def main():
    write_big_session()
    write_hostile_sessions()
    planted = planted_secrets()
    write_secret_session(planted)
    steps = [check_tools, check_list_and_search, check_sessions, check_figures, check_errors]
    if PG:
        p = subprocess.run([PIDX, *LOCAL, "push", "--pg", PG[0], "--source", "alpha"],
                           capture_output=True, text=True, env=ENV)
        if p.returncode != 0:
            raise RuntimeError(f"pidx push failed: {p.stderr.strip()}")
        steps.append(check_pg_stop)
    else:
        steps += [check_cancel, check_time_limit, check_freshness]
    params = StdioServerParameters(command=PIDX, args=[*GLOBAL, "mcp"], env=ENV, cwd=TMP)
    errlog = open(ERRLOG, "w", encoding="utf-8")
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            check(init.server_info.name == "pidx", f"serverInfo names pidx: {init.server_info}")
            for step in steps:
                t0 = time.monotonic()
                await step(s)
                print(f"{step.__name__}: {time.monotonic() - t0:.1f} s", flush=True)
            t0 = time.monotonic()
            await check_secrets(s, planted)
            print(f"check_secrets: {time.monotonic() - t0:.1f} s", flush=True)
    errors = open(ERRLOG, encoding="utf-8").read()
    check("panicked" not in errors, f"the server ends without a panic: {errors[-500:]!r}")
    print(f"mcp client check{' over --pg' if PG else ''}: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


asyncio.run(main())
