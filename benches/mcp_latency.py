"""Latency of each `pidx mcp` tool and the server's peak RSS while paging a huge session.

Usage (the venv of tests/mcp/run.sh has the `mcp` package):
  python benches/mcp_latency.py PIDX_BINARY SESSIONS_ROOT INDEX_DB [HUGE_SESSION_ID] [PAGES] [pages-only]
  PIDX_BENCH_PG=URL python benches/mcp_latency.py ...   # the same calls over `pidx --pg URL mcp`

With PIDX_BENCH_PG the server is read as it is (push the index there first); `sql_query`, which
is not offered over the team server, is left out.

The index is synced first (`pidx sync`), so the numbers are for answering, each call still
doing its freshness stat pass. Each tool is called 9 times with the same arguments; the median
and the slowest are printed in milliseconds, as measured by the client (stdio round trip
included). Then PAGES pages (default 200) of the huge session's context are read, from the end
and from the start, and the server's VmHWM (peak RSS) is read from /proc.
"""

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

PIDX, ROOT, DB = sys.argv[1:4]
HUGE = sys.argv[4] if len(sys.argv) > 4 else None
PAGES = int(sys.argv[5]) if len(sys.argv) > 5 else 200
# "pages-only": skip the tool timings, so the peak RSS is the paging's alone.
PAGES_ONLY = len(sys.argv) > 6 and sys.argv[6] == "pages-only"
GLOBAL = ["--root", ROOT, "--db", DB]
PG = os.environ.get("PIDX_BENCH_PG")
READ = ["--pg", PG] if PG else GLOBAL


def server_rss_kib():
    """VmHWM and VmRSS of the running `pidx ... mcp` on this index."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            if cmd and cmd[0].endswith(b"pidx") and b"mcp" in cmd and (READ[-1].encode() in cmd):
                status = open(f"/proc/{pid}/status").read()
                vals = {line.split(":")[0]: int(line.split()[1]) for line in status.splitlines()
                        if line.startswith(("VmHWM", "VmRSS"))}
                return vals
        except OSError:
            continue
    return {}


async def timed(s, tool, args, n=9):
    """Median and slowest of n calls, and the last answer; a call answered with an error (the
    10 s limit) ends the series, which is then reported as that error."""
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        r = await s.call_tool(tool, args)
        times.append((time.perf_counter() - t0) * 1000)
        if r.is_error:
            return None, max(times), r.content[0].text
    return statistics.median(times), max(times), r.structured_content


async def main():
    if not PG:
        t0 = time.time()
        subprocess.run([PIDX, *GLOBAL, "sync"], check=True)
        print(f"sync: {time.time() - t0:.1f} s")
    sessions = json.loads(subprocess.run([PIDX, *READ, "list", "--all", "--limit", "50", "--json"],
                                         capture_output=True, check=True).stdout)
    sid = sessions[len(sessions) // 2]["id"]
    params = StdioServerParameters(command=PIDX, args=[*READ, "mcp"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            calls = [
                ("search_sessions", {"query": "error"}),
                ("search_sessions", {"query": "parse_header", "literal": True}),
                ("list_sessions", {"all": True}),
                ("list_sessions", {"all": True, "query": "readme"}),
                ("get_session", {"session": sid}),
                ("get_context", {"session": sid}),
                ("get_context", {"session": sid, "from_end": True}),
                ("get_tree", {"session": sid}),
                ("usage_stats", {"by": ["month", "model"]}),
                ("sql_query", {"query": "SELECT cwd, count(*) AS n FROM v_sessions GROUP BY cwd ORDER BY n DESC"}),
            ]
            if PG:
                calls = [c for c in calls if c[0] != "sql_query"]
            if PAGES_ONLY:
                calls = []
            print("tool                 arguments                                   median ms   max ms")
            for tool, args in calls:
                med, worst, v = await timed(s, tool, args)
                if med is None:
                    print(f"{tool:20} {json.dumps(args)[:42]:43} error after {worst:.0f} ms: {v}")
                else:
                    print(f"{tool:20} {json.dumps(args)[:42]:43} {med:9.1f} {worst:8.1f}")
                print(f"  server peak RSS so far: {server_rss_kib().get('VmHWM')} KiB", flush=True)
            print(f"server RSS after the calls: {server_rss_kib()} KiB")
            if HUGE:
                for from_end in (True, False):
                    cursor, pages, chars, times = None, 0, 0, []
                    while pages < PAGES:
                        args = {"session": HUGE, "from_end": from_end}
                        if cursor:
                            args["cursor"] = cursor
                        t0 = time.perf_counter()
                        r = await s.call_tool("get_context", args)
                        times.append((time.perf_counter() - t0) * 1000)
                        v = r.structured_content
                        chars += sum(len(m["text"]) for m in v["messages"])
                        pages += 1
                        cursor = v.get("nextCursor")
                        if not cursor:
                            break
                    print(f"huge session context, from_end={from_end}: {pages} pages, {chars} chars, "
                          f"median {statistics.median(times):.1f} ms/page, max {max(times):.1f} ms; "
                          f"server {server_rss_kib()} KiB")

                # After the paging, so the RSS above is the paging's alone.
                med, worst, v = await timed(s, "get_tree", {"session": HUGE}, n=3)
                if med is None:
                    raise RuntimeError(f"get_tree: {v}")
                print(f"get_tree of the huge session: median {med:.1f} ms, {v['entries']} entries, "
                      f"{v['segmentCount']} segments; server {server_rss_kib()} KiB")


asyncio.run(main())