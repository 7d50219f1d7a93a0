"""The measurements of benches/serve.sh. Usage: serve_bench.py PIDX ROOT DB."""
import http.client, re, socket, sqlite3, statistics, subprocess, sys, time, urllib.parse

pidx, root, db = sys.argv[1:4]
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
server = subprocess.Popen([pidx, "--root", root, "--db", db, "serve", "--listen", "127.0.0.1:%d" % port],
                          stderr=subprocess.PIPE, text=True)
server.stderr.readline()
conn = None


def get(path):
    """(seconds from request to the last byte, status, body) on one kept-alive connection."""
    global conn
    if conn is None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    t = time.perf_counter()
    conn.request("GET", path, headers={"Host": "127.0.0.1:%d" % port})
    r = conn.getresponse()
    body = r.read()
    return time.perf_counter() - t, r.status, body


def rss():
    with open("/proc/%d/status" % server.pid) as f:
        fields = dict(l.split(":", 1) for l in f)
    return int(fields["VmRSS"].split()[0]) // 1024, int(fields["VmHWM"].split()[0]) // 1024


def times(path, n=15):
    get(path)  # warm
    ts = []
    for _ in range(n):
        t, status, _ = get(path)
        assert status == 200, (path, status)
        ts.append(t * 1000)
    return ts


def p(ts, q):
    ts = sorted(ts)
    return ts[min(len(ts) - 1, int(round(q * (len(ts) - 1))))]


rows = []
try:
    time.sleep(1)
    ix = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    n_sessions = ix.execute("SELECT count(*) FROM sessions WHERE state = 1").fetchone()[0]
    n_entries = ix.execute("SELECT count(*) FROM entries").fetchone()[0]
    big_path, big_entries = ix.execute(
        "SELECT f.path, count(*) FROM entries e JOIN files f ON f.id = e.file_id GROUP BY e.file_id ORDER BY 2 DESC LIMIT 1").fetchone()
    cwd = ix.execute("SELECT cwd, count(*) FROM sessions GROUP BY cwd ORDER BY 2 DESC LIMIT 1").fetchone()[0]
    big = "/s/" + urllib.parse.quote(big_path.rsplit("/", 1)[1])
    corpus = "%s sessions, %s entries" % (format(n_sessions, ","), format(n_entries, ","))

    for what, path in (("sessions page: projects with counts", "/"),
                       ("sessions page: one project (%s)" % cwd.rsplit("/", 1)[-1], "/?project=" + urllib.parse.quote(cwd, safe="")),
                       ("sessions page: every project, first 300 rows", "/?all=true")):
        ts = times(path)
        rows.append((what, "%.1f ms median, %.1f ms p95" % (statistics.median(ts), p(ts, 0.95)), "<= 30 ms"))
    ts = times(big)
    rows.append(("first screen of a session of %s entries" % format(big_entries, ","),
                 "%.1f ms median, %.1f ms p95" % (statistics.median(ts), p(ts, 0.95)), "<= 150 ms"))
    ts = times(big + "/tree", 5)
    rows.append(("its tree (first 3,000 rows)", "%.1f ms median" % statistics.median(ts), "-"))

    # Search as you type: every prefix of 2+ characters of words of the corpus vocabulary.
    words = ["parse_line", "runtime", "fixture", "migration", "tokenizer", "benchmark", "regression", "deadlock"]
    ts = []
    for w in words:
        for k in range(2, len(w) + 1):
            t, status, _ = get("/search?frag=1&q=" + urllib.parse.quote(w[:k]))
            assert status == 200
            ts.append(t * 1000)
    rows.append(("search as you type, %d prefixes of %d words" % (len(ts), len(words)),
                 "%.1f ms p50, %.1f ms p95" % (p(ts, 0.5), p(ts, 0.95)), "p95 <= 50 ms"))

    # RSS while paging through the long session from its first page to its last.
    _, _, body = get(big)
    pages, worst = 1, rss()[0]
    t0 = time.perf_counter()
    while True:
        m = re.search(rb'data-frag="([^"]+)"', body)
        if not m:
            break
        _, status, body = get(m.group(1).decode().replace("&amp;", "&"))
        assert status == 200
        pages += 1
        worst = max(worst, rss()[0])
    took = time.perf_counter() - t0
    now, peak = rss()
    rows.append(("paging through that session (%d pages, %.1f s)" % (pages, took),
                 "RSS %d MB at most between pages, peak (VmHWM) %d MB" % (worst, peak), "<= 200 MB"))
finally:
    server.terminate()
    server.wait()

print("corpus: %s (gen_corpus --seed 1), release build, loopback HTTP/1.1 keep-alive\n" % corpus)
print("| what | measured | goal |\n|---|---|---|")
for r in rows:
    print("| %s | %s | %s |" % r)
