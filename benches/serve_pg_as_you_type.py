"""`pidx --pg URL serve` against a held team server (benches/pg.sh with PIDX_BENCH_HOLD=1):
the usage page by month (twice), day and week, then search as you type, every prefix of two
characters and more of benches/serve_bench.py's eight words, one request each over one
kept-alive connection. Prints each page's status and time, then p50, p95 and max of the
prefixes with the statuses seen and the slowest. A benchmark, not a test.

usage: python3 benches/serve_pg_as_you_type.py PIDX URL"""
import http.client
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse

pidx, url = sys.argv[1:3]
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
server = subprocess.Popen([pidx, "--pg", url, "serve", "--listen", "127.0.0.1:%d" % port],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    conn = None
    for _ in range(300):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            conn.request("GET", "/assets/app-0.1.0.css")
            conn.getresponse().read()
            break
        except OSError:
            conn = None
            time.sleep(0.1)
    if conn is None:
        sys.exit("serve_pg_as_you_type.py: pidx serve did not answer")

    def get(path):
        t = time.perf_counter()
        conn.request("GET", path)
        r = conn.getresponse()
        r.read()
        return time.perf_counter() - t, r.status

    for path in ["/usage", "/usage", "/usage?by=day", "/usage?by=week"]:
        t, status = get(path)
        print("%s: HTTP %d in %.0f ms" % (path, status, t * 1000))
    words = ["parse_line", "runtime", "fixture", "migration", "tokenizer", "benchmark",
             "regression", "deadlock"]
    typed = []
    for w in words:
        for k in range(2, len(w) + 1):
            t, status = get("/search?frag=1&q=" + urllib.parse.quote(w[:k]))
            typed.append((t * 1000, w[:k], status))
    ms = sorted(t for t, _, _ in typed)
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    statuses = {}
    for _, _, status in typed:
        statuses[status] = statuses.get(status, 0) + 1
    print("search as you type, %d prefixes: p50 %.1f ms, p95 %.1f ms, max %.1f ms; HTTP statuses %s"
          % (len(ms), statistics.median(ms), p95, ms[-1], statuses))
    print("slowest: " + ", ".join("%s %.0f ms" % (p, t) for t, p, _ in sorted(typed, reverse=True)[:12]))
finally:
    server.terminate()
