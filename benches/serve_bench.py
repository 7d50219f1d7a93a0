"""The measurements of benches/serve.sh. Usage: serve_bench.py PIDX ROOT DB, or
serve_bench.py --write-line DIR MB (the session of one MB-megabyte message)."""
import http.client, json, os, re, socket, sqlite3, statistics, subprocess, sys, time, urllib.parse

LINE_FILE = "2026-01-02T00-00-00-000Z_0000000b-0000-7000-8000-00000000001e.jsonl"

if sys.argv[1] == "--write-line":
    folder, mb = sys.argv[2], int(sys.argv[3])
    os.makedirs(folder, exist_ok=True)
    para = "The parser reads one line at a time and keeps `offsets` of each entry; fixture %d.\n\n"
    with open(os.path.join(folder, LINE_FILE), "w") as f:
        f.write(json.dumps({"type": "session", "version": 3, "id": "0000000b-0000-7000-8000-00000000001e",
                            "timestamp": "2026-01-02T00:00:00.000Z", "cwd": "/bench/huge-line"}) + "\n")
        f.write('{"type":"message","id":"l1","parentId":null,"timestamp":"2026-01-02T00:01:00.000Z",'
                '"message":{"role":"user","timestamp":1767312060000,"content":"')
        written, n = 0, 0
        while written < mb * 1_000_000:
            chunk = json.dumps("".join(para % (n + i) for i in range(1000)))[1:-1]
            f.write(chunk)
            written += len(chunk)
            n += 1000
        f.write('"}}\n')
    sys.exit(0)

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
    # A session of median size, as most exports would be.
    mid_path = ix.execute(
        "SELECT f.path FROM entries e JOIN files f ON f.id = e.file_id GROUP BY e.file_id ORDER BY count(*) LIMIT 1 OFFSET (SELECT count(*) / 2 FROM files)").fetchone()[0]
    mid = "/s/" + urllib.parse.quote(mid_path.rsplit("/", 1)[1])
    hot = (ix.execute("SELECT path FROM touches GROUP BY path ORDER BY count(*) DESC LIMIT 1").fetchone() or ["/"])[0]
    corpus = "%s sessions, %s entries" % (format(n_sessions, ","), format(n_entries, ","))

    # The list's typed filter before anything read the sessions' texts (a list page starts
    # reading them; a key typed at once waits for all of them): the worst first key.
    cold, status, _ = get("/?all=true&frag=1&q=pa")
    assert status == 200
    for what, path in (("sessions page: projects with counts", "/"),
                       ("sessions page: one project (%s)" % cwd.rsplit("/", 1)[-1], "/?project=" + urllib.parse.quote(cwd, safe="")),
                       ("sessions page: every project, first 300 rows", "/?all=true")):
        ts = times(path)
        rows.append((what, "%.1f ms median, %.1f ms p95" % (statistics.median(ts), p(ts, 0.95)), "<= 30 ms"))
    # The pages of issue 51: list filters and orders (they read every row and its figures),
    # the usage page by each grouping, a session in the list's pane; each with its weight.
    _, _, css = get(re.search(rb'href="(/assets/[^"]+\.css)"', get("/")[2]).group(1).decode())
    _, _, js = get(re.search(rb'src="(/assets/[^"]+\.js)"', get("/")[2]).group(1).decode())
    for what, path in (("sessions: every project ordered by cost", "/?all=true&sort=cost"),
                       ("sessions: every project with failed tool calls", "/?all=true&errors=true"),
                       ("sessions: every project, model filter", "/?all=true&model=opus"),
                       ("usage by month (default)", "/usage"),
                       ("usage by day", "/usage?by=day"),
                       ("usage by model", "/usage?by=model"),
                       ("usage by tool", "/usage?by=tool"),
                       ("a session in the list's pane", big + "?pane=1"),
                       ("search page, a common word (`function`)", "/search?q=function"),
                       ("search page, a phrase", "/search?q=%22error+handling%22"),
                       ("the history of the file touched most", "/files?path=" + urllib.parse.quote(hot, safe="")),
                       ("a mid-size session's export as HTML", mid + "/export?as=html")):
        ts = times(path, 9)
        weight = len(get(path)[2])
        rows.append((what, "%.1f ms median, %.1f ms p95; %d KB HTML" % (statistics.median(ts), p(ts, 0.95), weight // 1024), "<= 100 ms"))
    rows.append(("the stylesheet and the script (every page; cached a day)", "%d KB + %d KB" % (len(css) // 1024 + 1, len(js) // 1024 + 1), "-"))
    ts = times(big)
    rows.append(("first screen of a session of %s entries" % format(big_entries, ","),
                 "%.1f ms median, %.1f ms p95" % (statistics.median(ts), p(ts, 0.95)), "<= 150 ms"))
    ts = times(big + "/tree", 5)
    rows.append(("its tree (first 3,000 rows)", "%.1f ms median" % statistics.median(ts), "-"))

    def as_you_type(url, words, shortest):
        """Milliseconds of each key typed: `url` with every prefix of `words` from `shortest`."""
        ts = []
        for w in words:
            for k in range(shortest, len(w) + 1):
                t, status, _ = get(url + urllib.parse.quote(w[:k]))
                assert status == 200
                ts.append(t * 1000)
        return ts

    # Search as you type: every prefix of 2+ characters of words of the corpus vocabulary.
    words = ["parse_line", "runtime", "fixture", "migration", "tokenizer", "benchmark", "regression", "deadlock"]
    ts = as_you_type("/search?frag=1&q=", words, 2)
    rows.append(("search as you type, %d prefixes of %d words" % (len(ts), len(words)),
                 "%.1f ms p50, %.1f ms p95" % (p(ts, 0.5), p(ts, 0.95)), "p95 <= 50 ms"))

    # The list's typed filter (pi's picker: fuzzy words over every session's text) as you type,
    # the texts read by then: every prefix of the same words.
    ts = as_you_type("/?all=true&frag=1&q=", words, 1)
    rows.append(("the list's typed filter as you type, %d prefixes (first key before any text was read: %.1f s)"
                 % (len(ts), cold), "%.1f ms p50, %.1f ms p95" % (p(ts, 0.5), p(ts, 0.95)), "p95 <= 100 ms"))

    # RSS while paging through the long session from its first page to its last: every page
    # while there are at most MOST_PAGES; past that the first ones, then pages spread evenly to
    # the last (each page builds the whole context plan, so the sample is what memory sees).
    MOST_PAGES = 200
    _, _, body = get(big)
    pages, worst, page_ts = 1, rss()[0], []
    t0 = time.perf_counter()
    sampled = big_entries > MOST_PAGES * 40
    while True:
        m = re.search(rb'data-frag="([^"]+)"', body)
        if not m:
            break
        url = m.group(1).decode().replace("&amp;", "&")
        if sampled and pages >= MOST_PAGES // 2:
            step = max(1, (big_entries - pages * 40) // (MOST_PAGES // 2))
            at = int(re.search(r"from=(\d+)", url).group(1))
            url = re.sub(r"from=\d+", "from=%d" % min(big_entries, at + step), url)
        t, status, body = get(url)
        assert status == 200
        page_ts.append(t * 1000)
        pages += 1
        worst = max(worst, rss()[0])
    took = time.perf_counter() - t0
    now, peak = rss()
    rows.append(("paging through that session (%d pages%s, %.1f s, %.0f ms a page median)"
                 % (pages, ", sampled to its end" if sampled else "", took, statistics.median(page_ts) if page_ts else 0),
                 "RSS %d MB at most between pages, peak (VmHWM) %d MB" % (worst, peak), "<= 200 MB"))

    # The long session's whole tree, a page of 3,000 rows at a time (every entry, where the
    # conversation shows only the current context).
    url, tree_pages, tree_worst, tree_ts = big + "/tree", 0, 0, []
    while url:
        t, status, body = get(url)
        assert status == 200, status
        tree_ts.append(t * 1000)
        tree_pages += 1
        tree_worst = max(tree_worst, rss()[0])
        m = re.search(rb'href="([^"]+/tree\?from=\d+)">more entries', body)
        url = m.group(1).decode() if m else None
    rows.append(("that session's whole tree (%d pages of 3,000 rows)" % tree_pages,
                 "%.0f ms a page median; RSS %d MB at most, peak (VmHWM) %d MB"
                 % (statistics.median(tree_ts), tree_worst, rss()[1]), "<= 200 MB"))
    worst = max(worst, tree_worst)

    # A message of one huge line: its page (the start), then its text a megabyte at a time.
    if ix.execute("SELECT 1 FROM files WHERE name = ?", (LINE_FILE,)).fetchone():
        t, status, body = get("/s/" + LINE_FILE)
        assert status == 200, status
        first = t * 1000
        chunks, ts, worst = 0, [], max(worst, rss()[0])
        m = re.search(rb'href="([^"]+/text\?[^"]+)"', body)
        link = m.group(1).decode().replace("&amp;", "&") if m else None
        while link:
            t, status, text = get(link)
            assert status == 200, status
            ts.append(t * 1000)
            chunks += 1
            worst = max(worst, rss()[0])
            m = re.search(rb"\[\xe2\x80\xa6 more: ([^\]]+)\]$", text)
            link = m.group(1).decode() if m else None
        size = os.path.getsize(os.path.join(root, "--bench-huge-line--", LINE_FILE))
        now, peak = rss()
        rows.append(("a %d MB line: its page, then %d text pieces of 1 MB" % (size // 1_000_000, chunks),
                     "page %.0f ms, a piece %.0f ms median; RSS %d MB at most, peak (VmHWM) %d MB"
                     % (first, statistics.median(ts) if ts else 0, worst, peak), "<= 200 MB"))
finally:
    server.terminate()
    server.wait()

print("corpus: %s (gen_corpus --seed 1), release build, loopback HTTP/1.1 keep-alive\n" % corpus)
print("| what | measured | goal |\n|---|---|---|")
for r in rows:
    print("| %s | %s | %s |" % r)
