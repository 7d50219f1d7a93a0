"""The checks of tests/browser/serve.sh. Usage: serve_test.py PIDX CHROMIUM WORKDIR (the
sessions already written to WORKDIR/sessions)."""
import http.client, json, os, socket, subprocess, sys, time, urllib.parse

sys.path.insert(0, os.path.dirname(__file__))
from cdp import Browser, Page  # noqa: E402

pidx, chromium, work = sys.argv[1:4]
root, db = os.path.join(work, "sessions"), os.path.join(work, "index.db")
A = "2026-03-01T08-00-00-000Z_aaaaaaaa-0000-7000-8000-000000000001.jsonl"
LONG = "2026-03-01T07-00-00-000Z_bbbbbbbb-0000-7000-8000-000000000002.jsonl"
EVIL = "2026-03-01T06-00-00-000Z_cccccccc-0000-7000-8000-000000000003.jsonl"
BIG = "2026-03-01T05-00-00-000Z_dddddddd-0000-7000-8000-000000000004.jsonl"
NEW = "2026-03-01T04-00-00-000Z_eeeeeeee-0000-7000-8000-000000000005.jsonl"
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(listen, *extra):
    p = subprocess.Popen([pidx, "--root", root, "--db", db, "serve", "--listen", listen, *extra],
                         stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()  # "pidx serve: URL"
    return p, line.strip().split(" ", 2)[-1]


def request(port, path, headers=None, host=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    h = {"Host": host or "127.0.0.1:%d" % port}
    h.update(headers or {})
    c.request("GET", path, headers=h)
    r = c.getresponse()
    body = r.read()
    return r.status, dict((k.lower(), v) for k, v in r.getheaders()), body


port = free_port()
server, url = start("127.0.0.1:%d" % port)
base = "http://127.0.0.1:%d" % port
try:
    # The first page waits for the first sync (bounded by the server's freshness wait).
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            status, headers, body = request(port, "/?all=true")
            if status == 200 and b"question number 0" in body and b"make a big output" in body:
                break
        except OSError:
            pass
        time.sleep(0.5)

    # HTTP-level rules.
    status, headers, body = request(port, "/")
    check(status == 200 and "script-src 'self'" in headers.get("content-security-policy", ""), "CSP header on pages")
    check(headers.get("x-content-type-options") == "nosniff", "nosniff header")
    status, _, _ = request(port, "/", host="evil.example:%d" % port)
    check(status == 421, "a foreign Host header is refused (got %d)" % status)
    status, _, _ = request(port, "/", host="localhost:%d" % port)
    check(status == 200, "localhost as Host is served")
    evil_page = request(port, "/s/" + EVIL)[2].decode()
    check("<script>window" not in evil_page and "&lt;script&gt;window.PWNED=1" in evil_page, "hostile text is escaped in the HTML")
    for ptr, what in (("/content/1", "an SVG image"), ("/content/2", "an SVG claiming to be a PNG")):
        status, h, _ = request(port, "/s/%s/image?e=3&m=0&p=%s" % (EVIL, urllib.parse.quote(ptr, safe="")))
        check(status == 404 and "svg" not in h.get("content-type", ""), "%s is not served (got %d)" % (what, status))
    status, h, body = request(port, "/s/%s/image?e=5&m=0&p=%s" % (A, urllib.parse.quote("/content/1", safe="")))
    check(status == 200 and h.get("content-type") == "image/png" and body.startswith(b"\x89PNG"), "a PNG is served as image/png")

    browser = Browser(chromium, os.path.join(work, "profile"))
    page = Page(browser)
    pwned = "window.PWNED === undefined"
    inert = ("document.querySelectorAll('script').length === 1 && "
             "![...document.querySelectorAll('*')].some(e => [...e.attributes].some(a => a.name.startsWith('on'))) && "
             "!document.querySelector('a[href^=\"javascript\" i], iframe, object, embed')")

    pages = ["/", "/?all=true", "/?project=%2Fhome%2Fu%2Falpha", "/s/" + A, "/s/%s/tree" % A, "/s/" + LONG,
             "/s/" + EVIL, "/s/%s/tree" % EVIL, "/s/" + NEW, "/?all=true&sort=cost&errors=true", "/s/" + BIG, "/search?q=hostile-marker", "/search?q=zanzibar",
             "/usage", "/usage?by=model&figure=tokens", "/usage?by=tool", "/?project=" + urllib.parse.quote('/home/u/evil"><img src=x onerror="window.PWNED=1">', safe="")]
    status, _, body = request(port, "/s/%s?pane=1" % EVIL)
    check(status == 200 and b"<script" not in body and b"&lt;script&gt;window.PWNED=1" in body, "a session in the list's pane is escaped as its page")
    for what, path in (("Markdown", "/s/%s/export?as=md" % NEW), ("page", "/s/%s/export?as=html" % NEW), ("hostile page", "/s/%s/export?as=html" % EVIL)):
        status, h, body = request(port, path)
        check(status == 200 and h.get("content-disposition", "").startswith("attachment;") and b"ghp_Zx9Qw3Er7Ty1Ui5Op2As6Df0Gh4Jk8Lz3Xc7" not in body
              and b"<script" not in body, "the session page's %s export downloads, redacted, with no script" % what)
    for p in pages:
        page.errors = []
        page.goto(base + p, timeout=60)
        time.sleep(0.2)
        page.pump()
        check(not page.errors, "%s loads with no console error %s" % (p, page.errors or ""))
        check(page.js(pwned), "%s: no payload ran" % p)
        check(page.js(inert), "%s: no payload became a script, handler or javascript: link" % p)

    page.goto(base + "/usage?by=model&figure=cost")
    check(page.js("document.querySelectorAll('svg.chart rect.bar').length >= 2 && [...document.querySelectorAll('svg.chart rect.bar')].every(r => r.getBBox().height > 0)"),
          "the usage chart draws a bar per model")
    big = page
    big.goto(base + "/s/" + BIG)
    check(big.js("document.body.textContent.includes('the rest')"), "the very large line shows its start and a link to the rest")
    rest = big.js("document.querySelector('p.more a').getAttribute('href')")
    status, h, body = request(port, rest)
    check(status == 200 and h.get("content-type", "").startswith("text/plain") and body.startswith(b"yyyy")
          and len(body) < 1100000 and b"more:" in body[-300:], "the rest comes as bounded plain text with a link further")
    big.js("window.scrollTo(0, document.body.scrollHeight)")
    big.until("document.querySelector('#messages').textContent.includes('big done')", timeout=30)
    check(True, "the message after the very large line loads as the page scrolls")

    # Filter as you type.
    page.goto(base + "/?all=true")
    # A phrase: words alone are fuzzy in pi's picker, and would match scattered letters.
    page.type("#filter", '"the very last"')
    page.until("document.querySelectorAll('#rows tbody tr').length === 1")
    check(page.js("document.querySelector('#rows tbody tr').innerText.includes('question number 0')"),
          "filtering as you type leaves the one session that says it")
    check("q=%22the+very+last%22" in page.js("location.href"), "the filtered listing has its own address")

    # Search as you type, then open a hit at its entry.
    page.goto(base + "/search")
    page.type("#search", "zanzibar")
    page.until("document.querySelectorAll('#results a.hit').length > 0")
    check(page.js("document.querySelector('#results mark').textContent.toLowerCase().includes('zanzibar')"),
          "search as you type highlights the match")
    # A newer query aborts the request of the one before it (the server then stops its query).
    page.js("window.ABORTED = 0; (f => { window.fetch = (u, o) => { if (o && o.signal) "
            "o.signal.addEventListener('abort', () => window.ABORTED++); return f(u, o); }; })(window.fetch); true")
    before = page.js("document.body.dataset.ready")
    page.js("(f => { f.dispatchEvent(new Event('change')); f.dispatchEvent(new Event('change')); })"
            "(document.querySelector('#search').form); true")
    page.until("document.body.dataset.ready !== %s && document.querySelectorAll('#results a.hit').length > 0"
               % json.dumps(before))
    check(page.js("window.ABORTED") == 1, "a newer search aborts the older one still in flight (aborted: %r)"
          % page.js("window.ABORTED"))
    page.js("document.querySelector('#results a.hit').click()")
    page.until("location.pathname.startsWith('/s/') && document.readyState === 'complete'")
    check(page.js("!!document.querySelector('article.hit#e-a0007') && document.querySelector('article.hit').innerText.includes('zanzibar')"),
          "a hit opens its session with that entry highlighted")
    check(page.js("(r => r.top >= 0 && r.top < innerHeight)(document.querySelector('article.hit').getBoundingClientRect())"),
          "the hit entry is scrolled into view")

    # A hit on another branch opens the context at that branch.
    page.goto(base + "/search")
    page.type("#search", "quokka")
    page.until("document.querySelectorAll('#results a.hit').length > 0")
    page.js("document.querySelector('#results a.hit').click()")
    page.until("location.pathname.startsWith('/s/') && document.readyState === 'complete'")
    check(page.js("document.querySelector('#messages').innerText.includes('quokka') && !document.querySelector('#messages').innerText.includes('zanzibar')"),
          "a hit off the current branch opens the context of its branch")

    # Walk the tree and show a leaf's context.
    page.goto(base + "/s/%s/tree" % A)
    check(page.js("document.querySelectorAll('ul.tree li').length === 12 && !!document.querySelector('li.path .star')"),
          "the tree shows every entry and the current leaf on the current branch")
    check(page.js("document.querySelector('#t-a0009 .label').textContent === 'side idea'"), "the tree shows labels")
    check(page.js("[...document.querySelectorAll('ul.tree .branch')].map(b => b.parentNode.id).join() === 't-a0003,t-a0008'"),
          "the tree marks where each of the two branches starts")
    page.js("document.querySelector('#t-a0009 a').click()")
    page.until("location.search.includes('leaf=a0009') && document.readyState === 'complete'")
    text = page.js("document.querySelector('#messages').innerText")
    check("Another way." in text and "zanzibar" not in text and "Please fix" in text,
          "choosing a tree entry shows the context at that leaf")

    # A conversation as it was typed.
    page.width(1000)
    page.goto(base + "/s/" + NEW)
    user = "document.querySelector('article.msg.user')"
    check(page.js(user + ".querySelector('pre.said').textContent.includes('build log\\n=========\\n# not a heading\\n*not emphasis* and 2 * 3 * 4\\n    indented line')"),
          "a person's text is shown as typed, line for line")
    check(page.js("!%s.querySelector('h1, h2, em, strong, pre code')" % user), "a person's text is not read as Markdown")
    check(page.js(user + ".querySelector('a[href=\"https://example.org/x?y=1\"]').textContent === 'https://example.org/x?y=1'"),
          "an address in a person's text is a link (without the full stop after it)")
    check(page.js("!!document.querySelector('article.msg.assistant .md h1') && !!document.querySelector('article.msg.assistant .md em')"),
          "an assistant's Markdown is rendered")
    check(page.js("(d => !!d && !d.open && d.querySelector('summary').textContent.includes('system prompt') && d.textContent.includes('SYSTEM-SECTION-TEXT'))(document.querySelector('details.system'))"),
          "a pi 1.6 system prompt (in sections, content empty) is shown, folded")
    calls = page.js("[...document.querySelectorAll('details.call')].map(d => [d.open, d.querySelector('summary').textContent.replace(/\\s+/g, ' ').trim()])")
    check(calls[:2] == [[False, "read src/lib.rs · ok · 1.2s"], [False, "edit src/lib.rs · ok · 40ms"]],
          "tool calls are folded to one line: tool, path, status, duration (%r)" % calls[:2])
    check(page.js("document.querySelector('details.call .result').textContent.includes('READ-RESULT-TEXT') && "
                  "![...document.querySelectorAll('article.msg')].some(a => a.classList.contains('tool'))"),
          "a tool's result is shown inside its call, not as a message of its own")
    check(page.js("(d => d.querySelectorAll('.del').length === 0 && d.querySelectorAll('.add').length === 1 && d.querySelector('.add').textContent === '+fn appended() {}\\n')(document.querySelectorAll('details.call')[1].querySelector('pre.diff'))"),
          "an edit that appends a line diffs as one added line")
    check(page.js("[...document.querySelectorAll('article.msg')].every(a => a.querySelector('a.perma[href*=\"#e-\"]') && a.querySelector('a.here[href*=\"?leaf=\"]'))"),
          "every message has a permalink and a link to the context at it")
    page.goto(base + "/s/" + A)
    check(page.js("(d => !!d && !d.open)(document.querySelector('details.thinking'))"), "thinking is folded")
    check(page.js("(d => !!d && !d.open && d.classList.contains('failed') && d.querySelector('summary').textContent.includes('cargo test runner') && d.querySelector('summary').textContent.includes('error'))(document.querySelector('details.call'))"),
          "a failed bash call says its command and its failure on its folded line")
    check(page.js("!!document.querySelector('article.msg.user img.shot') && !!document.querySelector('article.msg.assistant .md pre code.language-rust')"),
          "images inline, code blocks coloured")
    page.js("document.querySelector('article.msg:nth-of-type(3) a.here').click()")
    page.until("location.search.includes('leaf=') && document.readyState === 'complete'", timeout=60)
    check(page.js("document.querySelectorAll('article.msg').length") == 3, "the context at an entry is one click away")

    # Lists: figures, filters, order, two panes and keys.
    page.goto(base + "/?all=true")
    heads = page.js("[...document.querySelectorAll('#rows thead th')].map(t => t.textContent)")
    check(all(h in heads for h in ("model", "messages", "cost", "age")), "the list shows model, messages, cost and age (%r)" % heads)
    row = page.js("[...document.querySelectorAll('#rows tbody tr')].find(r => r.innerText.includes('Please fix')).innerText")
    check("sonnet" in row and "$0.04" in row and "⚠1" in row, "a session's row has its model, cost and failures (%r)" % row)
    page.goto(base + "/?all=true&errors=true")
    check(page.js("document.querySelectorAll('#rows tbody tr').length === 1 && document.querySelector('#rows tbody tr').innerText.includes('Please fix')"),
          "the failed-tool-calls filter leaves the one session with a failure")
    page.goto(base + "/?all=true")
    page.type("#model", "opus")
    page.until("document.querySelectorAll('#rows tbody tr').length === 1")
    check(page.js("document.querySelector('#rows tbody tr td.model').textContent.includes('very-long-model-name')"), "the model filter as you type")
    page.goto(base + "/?all=true&sort=messages")
    check(page.js("document.querySelector('#rows tbody tr').innerText.includes('question number 0')"), "ordered by messages, the longest first")
    page.goto(base + "/?all=true&since=2099-01-01")
    check(page.js("document.querySelectorAll('#rows tbody tr').length === 0"), "a date range with no session in it lists none")
    page.goto(base + "/")
    page.type("#pfilter", "beta")
    check(page.js("[...document.querySelectorAll('#projects tbody tr')].filter(r => !r.hidden).map(r => r.innerText.trim().split(/\\s/)[0]).join() === '/home/u/beta'"),
          "the projects page filters as you type")
    page.width(1600)
    page.goto(base + "/?all=true")
    page.key("j")
    page.key("j")
    check(page.js("document.querySelectorAll('#rows tbody tr.sel').length === 1 && document.querySelector('#rows tbody tr.sel') === document.querySelectorAll('#rows tbody tr')[1]"),
          "j moves the selection down the list")
    page.key("k")
    page.key("Enter")
    page.until("!!document.querySelector('#pane #messages article.msg')", timeout=60)
    check(page.js("location.pathname === '/' && (r => r.left > innerWidth / 3)(document.querySelector('#pane').getBoundingClientRect()) && "
                  "document.querySelector('#pane').innerText.includes(document.querySelector('#rows tbody tr.sel td.title').innerText.trim().slice(0, 20))"),
          "on a wide screen Enter opens the chosen session beside the list")
    page.key("t")
    page.until("location.pathname.endsWith('/tree') && document.readyState === 'complete'", timeout=60)
    check(True, "t opens the chosen session's tree")
    page.goto(base + "/s/" + A)
    page.key("/")
    check(page.js("location.pathname") == "/search" or page.js("document.activeElement.id") == "search", "/ goes to search")
    page.width(800)
    page.goto(base + "/?all=true")
    page.key("j")
    page.key("Enter")
    page.until("location.pathname.startsWith('/s/') && document.readyState === 'complete'", timeout=60)
    check(True, "on a narrow screen Enter opens the chosen session's page")
    page.goto(base + "/?all=true")
    page.key("/")
    check(page.js("document.activeElement.id") == "filter", "/ focuses the filter")

    # Dark mode follows the system.
    page.goto(base + "/s/" + A)
    light = page.js("getComputedStyle(document.body).backgroundColor")
    page.dark(True)
    dark = page.js("getComputedStyle(document.body).backgroundColor")
    page.dark(False)
    check(light == "rgb(255, 255, 255)" and dark not in (light, "rgba(0, 0, 0, 0)"), "dark mode from prefers-color-scheme (%s, %s)" % (light, dark))

    # The tree as a tree: rails, the current path, branches that fold.
    page.goto(base + "/s/%s/tree" % A)
    check(page.js("document.querySelectorAll('ul.tree li.path').length === 9 && document.querySelectorAll('ul.tree li .rail').length === 12"),
          "the tree draws rails and highlights the current path")
    before = page.js("[...document.querySelectorAll('ul.tree li')].filter(l => l.offsetParent).length")
    page.js("document.querySelector('#t-a0008 button.fold').click()")
    after = page.js("[...document.querySelectorAll('ul.tree li')].filter(l => l.offsetParent).length")
    check(before == 12 and after == 10 and page.js("document.querySelector('#t-a0008 .count').textContent.includes('2 folded')"),
          "a branch folds away with what is under it (%d -> %d rows)" % (before, after))
    page.js("document.querySelector('#t-a0008 button.fold').click()")
    check(page.js("[...document.querySelectorAll('ul.tree li')].filter(l => l.offsetParent).length") == 12, "and unfolds again")

    # Usage: the range and figures of `pidx stats`, every day drawn, the heatmap and top sessions.
    out = subprocess.run([pidx, "--root", root, "--db", db, "--json", "stats", "--by", "day"], capture_output=True, text=True)
    days = [r["key"]["day"] for r in json.loads(out.stdout)]
    page.goto(base + "/usage?by=day")
    got = page.js("[document.querySelector('#range .first').textContent, document.querySelector('#range .last').textContent, document.querySelectorAll('svg.chart rect.slot').length]")
    check(got == [days[0], days[-1], 10] and len(days) == 2, "the usage range is stats's, each of its %r days a slot (%r)" % (days, got))
    check(page.js("document.querySelectorAll('table.usage tbody tr').length === 10 && document.querySelectorAll('table.usage tbody tr.quiet').length === 8"),
          "the table lists the quiet days too")
    check(page.js("/\\d,\\d{3} tokens/.test(document.querySelector('#total').textContent)"), "the total has thousands separators")
    check(page.js("document.querySelectorAll('svg.heat rect.cell').length === 168"), "a weekday x hour heatmap")
    check(page.js("(t => t.length >= 3 && t[0].querySelector('a').textContent.includes('question number 0'))([...document.querySelectorAll('#top-sessions tbody tr')])"),
          "the most expensive sessions, the dearest first")
    page.goto(base + "/usage?by=model&figure=cost")
    errors = page.js("Object.fromEntries([...document.querySelectorAll('table.usage tbody tr')].map(r => [r.cells[0].textContent, r.cells[5].textContent]))")
    check(errors.get("sonnet") == "1", "the failed bash call counts for the model that made it (%r)" % errors)
    check(page.js("(t => !!t && t.getBBox().x >= 0)([...document.querySelectorAll('svg.chart text.key')].find(t => t.textContent === 'claude-opus-4-5-20251101-with-a-very-long-model-name'))"),
          "a long model name is whole in the chart")

    # Export: a page that opens offline, holds its image, runs nothing, keeps no planted secret.
    for name, args in (("a.html", [A]), ("new.html", [NEW]), ("new.md", [NEW, "--md"])):
        subprocess.run([pidx, "--root", root, "--db", db, "export", *args, "-o", os.path.join(work, name)], check=True)
    for name in ("new.html", "new.md"):
        text = open(os.path.join(work, name)).read()
        check("ghp_Zx9Qw3Er7Ty1Ui5Op2As6Df0Gh4Jk8Lz3Xc7" not in text and "PLANTED" in text, "the %s export holds no planted secret" % name)
    page.send("Network.emulateNetworkConditions", {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    page.errors = []
    page.goto("file://" + os.path.join(work, "a.html"))
    time.sleep(0.3)
    page.pump()
    check(not page.errors and page.js("document.querySelector('img.shot').complete && document.querySelector('img.shot').naturalWidth === 1"),
          "the exported page opens offline with its image %s" % (page.errors or ""))
    check(page.js("document.querySelectorAll('script').length === 0 && !!document.querySelector('details.call') && getComputedStyle(document.querySelector('article.msg.user')).borderLeftStyle === 'solid'"),
          "the exported page has no script, its calls folded and its styles inside")
    page.send("Network.emulateNetworkConditions", {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})

    # Paging a long session as it scrolls.
    page.goto(base + "/s/" + LONG)
    first = page.js("document.querySelectorAll('article.msg').length")
    check(0 < first < 601, "a long session's first page holds part of it (%d messages)" % first)
    for _ in range(40):
        if page.js("document.querySelectorAll('article.msg').length") >= 601:
            break
        page.js("window.scrollTo(0, document.body.scrollHeight)")
        time.sleep(0.3)
    n = page.js("document.querySelectorAll('article.msg').length")
    check(n == 601, "scrolling pages through all 601 messages (%d)" % n)
    check(page.js("new Set([...document.querySelectorAll('article.msg')].map(a => a.dataset.entry)).size === 601"),
          "no message is shown twice")
    check(page.js("document.querySelector('article.msg:last-of-type').innerText.includes('wombat')"), "the last page ends with the last message")

    # Live update after appending a line.
    page.goto(base + "/s/" + A)
    time.sleep(1.5)  # the event stream is open
    with open(os.path.join(root, "--home-u-alpha--", A), "a") as f:
        f.write(json.dumps({"type": "message", "id": "a0099", "parentId": "a0012", "timestamp": "2026-03-01T10:00:00.000Z",
                            "message": {"role": "user", "content": "live-appended koala", "timestamp": 1772359200000}}) + "\n")
    try:
        page.until("document.querySelector('#messages').innerText.includes('live-appended koala')", timeout=20)
        check(True, "an appended line shows up in the open session")
    except AssertionError:
        check(False, "an appended line shows up in the open session")

    # No horizontal overflow at 800 and 1600 px.
    keep = os.environ.get("PIDX_KEEP_SERVE")
    if keep:
        os.makedirs(keep, exist_ok=True)
    for w in (400, 1000, 1600):
        page.width(w)
        for name, p in (("projects", "/"), ("sessions", "/?all=true"), ("session", "/s/" + A), ("session16", "/s/" + NEW), ("tree", "/s/%s/tree" % A),
                        ("hostile", "/s/" + EVIL), ("big", "/s/" + BIG), ("search", "/search?q=number"), ("usage", "/usage?by=day")):
            page.goto(base + p, timeout=60)
            time.sleep(0.2)
            over = page.js("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            check(over <= 0, "%s fits %d px (overflow %d px)" % (name, w, over))
            if keep:
                page.screenshot(os.path.join(keep, "%s-%d.png" % (name, w)))
    browser.close()
finally:
    server.terminate()
    server.wait()

# Off loopback: the token.
port = free_port()
server, url = start("0.0.0.0:%d" % port)
try:
    time.sleep(0.5)
    token = urllib.parse.parse_qs(urllib.parse.urlparse(url).query).get("token", [""])[0]
    check(len(token) >= 32, "a non-loopback listen prints a generated token")
    status, _, _ = request(port, "/")
    check(status == 401, "no token: 401 (got %d)" % status)
    status, _, _ = request(port, "/?token=wrong")
    check(status == 401, "a wrong token: 401 (got %d)" % status)
    status, _, _ = request(port, "/", {"Cookie": "pidx_token=wrong"})
    check(status == 401, "a wrong token cookie: 401 (got %d)" % status)
    status, h, _ = request(port, "/?token=" + token)
    cookie = h.get("set-cookie", "")
    check(status == 303 and "HttpOnly" in cookie and "SameSite=Strict" in cookie and h.get("location") == "/",
          "the token in the address sets an HttpOnly SameSite=Strict cookie and leaves the address")
    status, _, _ = request(port, "/", {"Cookie": cookie.split(";")[0]})
    check(status == 200, "the cookie lets the pages through (got %d)" % status)
    status, _, _ = request(port, "/", {"Authorization": "Bearer " + token})
    check(status == 200, "the token as a bearer header lets the pages through (got %d)" % status)
finally:
    server.terminate()
    server.wait()

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
