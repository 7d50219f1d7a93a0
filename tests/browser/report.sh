#!/usr/bin/env bash
# The HTML report in a real browser: builds a small corpus (several days, models and projects,
# plus sessions whose names are script and img-onerror payloads), writes `pidx report --html`,
# opens it in headless Chromium and checks that the charts were drawn with a size and that no
# payload ran. Installs Debian's chromium when it can (root + apt-get); otherwise prints SKIPPED.
#   PIDX_KEEP_REPORT=DIR  keep report.html, checks.html and screenshot.png in DIR
set -euo pipefail
cd "$(dirname "$0")/../.."

browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser="$b"; break; fi
done
if [ -z "$browser" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "report.sh: installing chromium (Debian package)" >&2
  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; } >/tmp/pidx-chromium-install.log 2>&1 || true
  command -v chromium >/dev/null 2>&1 && browser=chromium
fi
if [ -z "$browser" ]; then
  echo "=================================================================="
  echo "SKIPPED: HTML report browser test: no chromium (install Debian's 'chromium' package)"
  echo "=================================================================="
  exit 0
fi

cargo build --quiet
pidx="$PWD/target/debug/pidx"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$work/sessions"

python3 - "$root" <<'PY'
import json, os, sys
root = sys.argv[1]
def session(project, sid, name, days, model, cost):
    d = os.path.join(root, "--home-u-" + project + "--")
    os.makedirs(d, exist_ok=True)
    lines = [{"type": "session", "version": 3, "id": sid, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/home/u/" + project}]
    parent = None
    for i, day in enumerate(days):
        ts = "2026-01-%02dT10:00:00.000Z" % day
        uid, aid = "%s-u%d" % (sid, i), "%s-a%d" % (sid, i)
        lines.append({"type": "message", "id": uid, "parentId": parent, "timestamp": ts,
                      "message": {"role": "user", "content": "question %d" % i, "timestamp": 1}})
        lines.append({"type": "message", "id": aid, "parentId": uid, "timestamp": ts,
                      "message": {"role": "assistant", "content": [{"type": "text", "text": "answer"}],
                                  "provider": "p", "model": model, "timestamp": 2,
                                  "usage": {"input": 1000, "output": 200, "cacheRead": 0, "cacheWrite": 0,
                                            "totalTokens": 1200, "cost": {"total": cost}}}})
        parent = aid
    if name:
        lines.append({"type": "session_info", "id": sid + "-n", "parentId": parent, "timestamp": "2026-01-20T00:00:00.000Z", "name": name})
    with open(os.path.join(d, "2026-01-01T00-00-00-000Z_%s.jsonl" % sid), "w") as f:
        f.write("\n".join(json.dumps(l) for l in lines) + "\n")
session("alpha", "s1", "<script>document.title='PWNED'</script>", [1, 2, 3], "sonnet", 0.5)
session("beta", "s2", "<img src=x onerror=\"document.title='PWNED'\">", [2, 4, 6, 8], "gpt", 0.25)
session("gamma", "s3", "plain name & more", [5, 9], "gemini", 1.0)
PY

"$pidx" --root "$root" --db "$work/index.db" report --html "$work/report.html" --tz UTC >/dev/null
grep -q '&lt;script&gt;' "$work/report.html"

cat >"$work/checks.html" <<'HTML'
<!DOCTYPE html><html><head><title>checks</title></head><body>
<iframe id="f" src="report.html" width="1200" height="2400"></iframe>
<pre id="out">pending</pre>
<script>
document.getElementById("f").addEventListener("load", () => {
  const d = document.getElementById("f").contentDocument;
  const r = {title: d.title, scripts: d.querySelectorAll("script").length,
             imgs: d.querySelectorAll("img").length, charts: {}};
  for (const id of ["cost-by-day", "tokens-by-day", "cost-by-model", "cost-by-project"]) {
    const svg = d.getElementById(id);
    const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
    const bars = svg ? [...svg.querySelectorAll("rect.bar")].filter(b => {
      const bb = b.getBoundingClientRect(); return bb.width > 0 && bb.height > 0; }).length : 0;
    r.charts[id] = {width: Math.round(box.width), height: Math.round(box.height), bars};
  }
  const names = [...d.querySelectorAll("#top-sessions td:first-child")].map(td => td.textContent);
  r.names = names;
  document.getElementById("out").textContent = JSON.stringify(r);
});
</script></body></html>
HTML

flags=(--headless --no-sandbox --disable-gpu --allow-file-access-from-files --virtual-time-budget=5000)
"$browser" "${flags[@]}" --dump-dom "file://$work/checks.html" 2>/dev/null >"$work/dom.html"
"$browser" "${flags[@]}" --window-size=1200,1600 --screenshot="$work/screenshot.png" "file://$work/report.html" >/dev/null 2>&1 || true

python3 - "$work/dom.html" <<'PY'
import html, json, re, sys
dom = open(sys.argv[1]).read()
m = re.search(r'<pre id="out">(.*?)</pre>', dom, re.S)
assert m, "the check page did not run"
r = json.loads(html.unescape(m.group(1)))
print("report.sh: browser saw", json.dumps(r))
assert r["title"] == "pidx report", "a payload changed the title: %r" % r["title"]
assert r["scripts"] == 0 and r["imgs"] == 0, "markup from a session name became elements"
expect = {"cost-by-day": 8, "tokens-by-day": 8, "cost-by-model": 3, "cost-by-project": 3}
for chart, bars in expect.items():
    c = r["charts"][chart]
    assert c["width"] > 100 and c["height"] > 50, "%s has no size: %r" % (chart, c)
    assert c["bars"] >= bars, "%s drew %d bars, expected %d" % (chart, c["bars"], bars)
assert "<script>document.title='PWNED'</script>" in r["names"], r["names"]
assert any(n.startswith("<img src=x") for n in r["names"]), r["names"]
PY
if [ -n "${PIDX_KEEP_REPORT:-}" ]; then
  mkdir -p "$PIDX_KEEP_REPORT"
  cp "$work/report.html" "$work/checks.html" "$PIDX_KEEP_REPORT/"
  [ -f "$work/screenshot.png" ] && cp "$work/screenshot.png" "$PIDX_KEEP_REPORT/"
fi
echo "report.sh: charts drawn, no payload ran"
