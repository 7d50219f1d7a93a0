#!/usr/bin/env bash
# Regenerates the screenshots of docs/web.md (docs/web/*.png) from the browser-test fixtures
# (tests/browser/serve_corpus.py): a debug build serves them on a free port and headless
# Chromium photographs each page. Needs chromium (Debian's package).
#   bash docs/web/shots.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
[ -n "$browser" ] || { echo "shots.sh: needs chromium" >&2; exit 1; }
cargo build --quiet
pidx="${CARGO_TARGET_DIR:-$PWD/target}/debug/pidx"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 tests/browser/serve_corpus.py "$work/sessions" 1
HOME="$work" python3 - "$pidx" "$browser" "$work" docs/web <<'PY'
import os, socket, subprocess, sys, time
sys.path.insert(0, "tests/browser")
from cdp import Browser, Page
pidx, chromium, work, out = sys.argv[1:5]
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
server = subprocess.Popen([pidx, "--root", work + "/sessions", "--db", work + "/index.db", "serve",
                           "--listen", "127.0.0.1:%d" % port], stderr=subprocess.PIPE, text=True)
server.stderr.readline()
base = "http://127.0.0.1:%d" % port
A = "2026-03-01T08-00-00-000Z_aaaaaaaa-0000-7000-8000-000000000001.jsonl"
NEW = "2026-03-01T04-00-00-000Z_eeeeeeee-0000-7000-8000-000000000005.jsonl"
try:
    b = Browser(chromium, work + "/profile")
    page = Page(b)
    def shot(name, path, width, height=760, then=None):
        page.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        page.goto(base + path, timeout=60)
        time.sleep(0.3)
        if then:
            then()
            time.sleep(0.5)
        page.screenshot(os.path.join(out, name + ".png"))
        print("%s.png %d KB" % (name, os.path.getsize(os.path.join(out, name + ".png")) // 1024))
    def open_first():
        page.key("j"); page.key("j"); page.key("Enter")
        page.until("!!document.querySelector('#pane #messages article.msg')")
    def open_call():
        page.js("document.querySelectorAll('details.call').forEach(d => d.open = true); true")
    shot("list-two-panes", "/?all=true", 1400, then=open_first)
    shot("conversation", "/s/" + NEW, 1100, 1250, then=open_call)
    shot("conversation-branch", "/s/" + A, 1100, 1100)
    shot("tree", "/s/%s/tree" % A, 1000, 420)
    shot("usage", "/usage?by=day", 1100, 1100)
    shot("list-400px", "/?all=true", 400, 760)
    b.close()
finally:
    server.terminate()
PY
