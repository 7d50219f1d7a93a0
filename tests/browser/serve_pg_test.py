"""The checks of tests/browser/serve_pg.sh. Usage: serve_pg_test.py PIDX CHROMIUM WORKDIR READER_URL
(the fixtures pushed as sources alpha and beta)."""
import os, subprocess, sys, time, urllib.parse

sys.path.insert(0, os.path.dirname(__file__))
from cdp import Browser, Page  # noqa: E402

pidx, chromium, work, reader = sys.argv[1:5]
A = "2026-03-01T08-00-00-000Z_aaaaaaaa-0000-7000-8000-000000000001.jsonl"
EVIL = "2026-03-01T06-00-00-000Z_cccccccc-0000-7000-8000-000000000003.jsonl"
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


server = subprocess.Popen([pidx, "--pg", reader, "serve", "--listen", "127.0.0.1:0"],
                          stderr=subprocess.PIPE, text=True)
base = server.stderr.readline().strip().split(" ", 2)[-1].rstrip("/")
try:
    browser = Browser(chromium, os.path.join(work, "profile"))
    page = Page(browser)
    inert = ("window.PWNED === undefined && document.querySelectorAll('script').length === 1 && "
             "![...document.querySelectorAll('*')].some(e => [...e.attributes].some(a => a.name.startsWith('on')))")
    a, evil = "/s/alpha%2F" + A, "/s/beta%2F" + EVIL
    for p in ["/", "/?all=true", "/?all=true&source=beta", a, a + "/tree", evil, evil + "/tree",
              "/search?q=zanzibar", "/usage?by=source&figure=sessions"]:
        page.errors = []
        page.goto(base + p, timeout=60)
        time.sleep(0.2)
        page.pump()
        check(not page.errors, "%s loads with no console error %s" % (p, page.errors or ""))
        check(page.js(inert), "%s: no payload ran or became a script" % p)
    page.goto(base + "/")
    check(page.js("[...document.querySelectorAll('#sources a')].map(a => a.textContent).join(' ') === 'all alpha beta'"),
          "the projects page lists both sources as filters")
    page.goto(base + "/?all=true")
    check(page.js("[...document.querySelectorAll('td.source')].some(t => t.innerText === 'alpha') && "
                  "[...document.querySelectorAll('td.source')].some(t => t.innerText === 'beta')"),
          "every session shows its source")
    page.goto(base + "/?all=true&source=beta")
    check(page.js("document.querySelectorAll('td.source').length === 0 && "
                  "[...document.querySelectorAll('#rows a')].every(l => !l.href.includes('alpha%2F'))"),
          "the source filter leaves one machine's sessions")
    page.goto(base + "/search?source=alpha")
    page.type("#search", "zanzibar")
    page.until("document.querySelectorAll('#results a.hit').length > 0")
    page.js("document.querySelector('#results a.hit').click()")
    page.until("location.pathname.startsWith('/s/alpha') && document.readyState === 'complete'")
    check(page.js("!!document.querySelector('article.hit') && document.querySelector('article.hit').innerText.includes('zanzibar')"),
          "a hit typed on one machine opens its session there, highlighted")
    page.goto(base + a + "/tree")
    page.js("document.querySelector('ul.tree a').click()")
    page.until("location.search.includes('leaf=') && document.readyState === 'complete'")
    check(page.js("document.querySelectorAll('#messages article').length > 0"), "the tree opens the context at a leaf")
    browser.close()
finally:
    server.terminate()
    server.wait()
if failures:
    print("serve_pg.sh: %d checks failed" % len(failures))
    sys.exit(1)
print("serve_pg.sh: all browser checks passed")
