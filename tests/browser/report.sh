#!/usr/bin/env bash
# The HTML report in a real browser. Builds a corpus in a temp dir (300 days with quiet stretches,
# nine models, tools that fail, an entry without a valid timestamp, and session, project, model
# and tool names that are script / img-onerror / ESC-sequence payloads), writes two reports (the
# whole range, drawn by week; two months, drawn by day), opens them in headless Chromium and
# checks: every chart drawn with a size, one slot per period with quiet periods empty, no payload
# ran or became an element, and the page fits 800 px and 1600 px wide windows without horizontal
# overflow (measured in a test-only wrapper page that has a script; the report has none).
# Screenshots at both widths are taken for a person to look at. Installs Debian's chromium when
# it can (root + apt-get); otherwise prints SKIPPED.
#   PIDX_KEEP_REPORT=DIR  keep the reports, the wrapper page and the screenshots in DIR
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
pidx="${CARGO_TARGET_DIR:-$PWD/target}/debug/pidx"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$work/sessions"

# Writes the corpus and, from the same plan, what the reports must show.
python3 - "$root" "$work/expect.json" <<'PY'
import datetime as dt, json, os, sys
root, expect_path = sys.argv[1], sys.argv[2]
start = dt.date(2026, 1, 1)
# Active days: a busy January, nothing for 40 days, scattered days after, a quiet end.
offsets = sorted(set(list(range(0, 25, 2)) + [65, 66, 70, 71, 72, 80, 95, 96, 110, 150, 200, 201, 250, 299]))
days = [start + dt.timedelta(days=o) for o in offsets]
models = ["sonnet", "gpt", "gemini", "opus", "haiku", "<b>bold</b>\x1b]0;T\x07", "m7", "m8", "m9"]
hostile = ["<script>document.title='PWNED'</script>", "<img src=x onerror=\"document.title='PWNED'\">",
           "\x1b[2Jclear\x1b]0;title\x07", "plain name & more"]
projects = ["alpha", "beta\"><svg onload=\"document.title='PWNED'\">", "gamma", "delta"]
tools = ["bash", "read", "<script>document.title='PWNED'</script>"]
sessions = {}
for i, day in enumerate(days):
    sessions.setdefault(i % 6, []).append((i, day))
for s, items in sessions.items():
    project = projects[s % len(projects)]
    cwd = "/home/u/" + project
    d = os.path.join(root, "--home-u-" + str(s) + "--")
    os.makedirs(d, exist_ok=True)
    sid = "0199aaaa-0000-7000-8000-%012d" % s  # same first 8 characters for every session
    lines = [{"type": "session", "version": 3, "id": sid, "timestamp": items[0][1].isoformat() + "T08:00:00.000Z", "cwd": cwd}]
    parent = None
    for i, day in items:
        ts = day.isoformat() + "T10:00:00.000Z"
        def add(entry):
            global parent
            entry.update({"id": "%s-%d" % (sid, len(lines)), "parentId": parent, "timestamp": ts})
            lines.append(entry)
            parent = entry["id"]
        add({"type": "message", "message": {"role": "user", "content": "question %d" % i, "timestamp": 1}})
        tool = tools[i % len(tools)]
        add({"type": "message", "message": {"role": "assistant", "provider": "p", "model": models[i % len(models)], "timestamp": 2,
             "content": [{"type": "toolCall", "id": "c%d" % i, "name": tool, "arguments": {}}],
             "usage": {"input": 1000 + i, "output": 200, "cacheRead": 5000, "cacheWrite": 300, "totalTokens": 6500 + i,
                       "cost": {"total": 0.25 * (1 + i % 5)}}}})
        add({"type": "message", "message": {"role": "toolResult", "toolCallId": "c%d" % i, "toolName": tool,
             "content": [{"type": "text", "text": "out"}], "isError": i % 4 == 0, "timestamp": 3}})
    if s == 0:
        # Activity without a valid timestamp: in the totals, in no period.
        lines.append({"type": "message", "id": sid + "-undated", "parentId": parent, "timestamp": "not a date",
                      "message": {"role": "assistant", "provider": "p", "model": "sonnet", "timestamp": 4, "content": [],
                                  "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2, "cost": {"total": 7.0}}}})
    lines.append({"type": "session_info", "id": sid + "-n", "parentId": parent, "timestamp": items[-1][1].isoformat() + "T11:00:00.000Z",
                  "name": hostile[s % len(hostile)]})
    with open(os.path.join(d, "2026-01-01T00-00-00-000Z_%s.jsonl" % sid), "w") as f:
        f.write("\n".join(json.dumps(l) for l in lines) + "\n")
weeks = {d.isocalendar()[:2] for d in days}
first_week = start - dt.timedelta(days=start.weekday())
last_day = start + dt.timedelta(days=299)
week_slots = ((last_day - dt.timedelta(days=last_day.weekday())) - first_week).days // 7 + 1
window = [d for d in days if dt.date(2026, 3, 1) <= d <= dt.date(2026, 4, 30)]
json.dump({"weekSlots": week_slots, "activeWeeks": len(weeks), "daySlots": 61, "activeDays": len(window)}, open(expect_path, "w"))
PY

run() { "$pidx" --root "$root" --db "$work/index.db" report --tz UTC "$@"; }
run --html "$work/report.html" >/dev/null
run --html "$work/days.html" --since 2026-03-01 --until 2026-04-30 >/dev/null
grep -q '&lt;script&gt;' "$work/report.html"
if grep -q $'\x1b' "$work/report.html"; then echo "report.sh: an ESC byte reached the page" >&2; exit 1; fi

# The wrapper: each report in iframes 800 and 1600 px wide (an iframe's width is its page's
# viewport), measured from outside. Test-only; the report itself has no script.
cat >"$work/checks.html" <<'HTML'
<!DOCTYPE html><html><head><title>checks</title></head><body>
<iframe data-page="report" data-width="800" src="report.html" width="800" height="3000"></iframe>
<iframe data-page="report" data-width="1600" src="report.html" width="1600" height="3000"></iframe>
<iframe data-page="days" data-width="800" src="days.html" width="800" height="3000"></iframe>
<iframe data-page="days" data-width="1600" src="days.html" width="1600" height="3000"></iframe>
<pre id="out">pending</pre>
<script>
function measure(frame) {
  const d = frame.contentDocument, root = d.documentElement;
  const r = {page: frame.dataset.page, width: +frame.dataset.width, title: d.title,
             scrollWidth: root.scrollWidth, clientWidth: root.clientWidth,
             scripts: d.querySelectorAll("script").length, imgs: d.querySelectorAll("img").length,
             handlers: d.querySelectorAll("[onload],[onerror]").length, charts: {}};
  for (const svg of d.querySelectorAll("svg.chart")) {
    const box = svg.getBoundingClientRect();
    const bars = [...svg.querySelectorAll("rect.bar")].filter(b => {
      const bb = b.getBoundingClientRect(); return bb.width > 0 && bb.height > 0; });
    const slots = new Set(bars.map(b => b.getAttribute("x")));
    const lines = [...svg.querySelectorAll("path.line")].map(p => p.getBoundingClientRect().width);
    // Date labels side by side must not overlap (their boxes as drawn).
    const boxes = [...svg.querySelectorAll("text.tick-label")].map(t => t.getBoundingClientRect()).sort((a, b) => a.left - b.left);
    const overlaps = boxes.filter((b, i) => i > 0 && b.left < boxes[i - 1].right - 0.5).length;
    r.charts[svg.id] = {overlaps: overlaps, width: Math.round(box.width), height: Math.round(box.height), right: Math.round(box.right),
                        bars: bars.length, slots: slots.size, ticks: svg.querySelectorAll("text.tick-label").length,
                        line: Math.round(Math.max(0, ...lines))};
  }
  r.range = (d.getElementById("range") || {}).textContent || "";
  r.undated = (d.getElementById("undated") || {}).textContent || "";
  r.names = [...d.querySelectorAll("#top-sessions td:nth-child(4)")].map(td => td.textContent);
  r.ids = [...d.querySelectorAll("#top-sessions code")].map(c => c.textContent);
  r.projects = [...d.querySelectorAll("#top-sessions td:nth-child(5)")].map(td => td.title);
  r.labels = [...d.querySelectorAll("svg text.label")].map(t => t.textContent);
  return r;
}
window.addEventListener("load", () => {
  const all = [...document.querySelectorAll("iframe")].map(measure);
  document.getElementById("out").textContent = JSON.stringify(all);
});
</script></body></html>
HTML

flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --allow-file-access-from-files --virtual-time-budget=5000)
"$browser" "${flags[@]}" --dump-dom "file://$work/checks.html" 2>/dev/null >"$work/dom.html"
for w in 800 1600; do
  "$browser" "${flags[@]}" --window-size=$w,2600 --screenshot="$work/report-$w.png" "file://$work/report.html" >/dev/null 2>&1 || true
  "$browser" "${flags[@]}" --window-size=$w,1400 --screenshot="$work/days-$w.png" "file://$work/days.html" >/dev/null 2>&1 || true
done

python3 - "$work/dom.html" "$work/expect.json" "$pidx" "$root" "$work/index.db" <<'PY'
import html, json, re, subprocess, sys
dom, expect = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
pidx, root, db = sys.argv[3:6]
m = re.search(r'<pre id="out">(.*?)</pre>', dom, re.S)
assert m and m.group(1) != "pending", "the check page did not run"
pages = json.loads(html.unescape(m.group(1)))
for r in pages:
    where = "%s at %d px" % (r["page"], r["width"])
    print("report.sh: %s: scrollWidth %d, clientWidth %d, charts %s" % (where, r["scrollWidth"], r["clientWidth"],
          {k: (v["width"], v["slots"], v["ticks"]) for k, v in r["charts"].items()}))
    assert r["title"] == "pidx report", "%s: a payload changed the title: %r" % (where, r["title"])
    assert r["scripts"] == 0 and r["imgs"] == 0 and r["handlers"] == 0, "%s: a name became markup" % where
    assert r["scrollWidth"] <= r["clientWidth"], "%s overflows horizontally: %r" % (where, r)
    for cid in ["cost-by-period", "cumulative-cost", "tokens-by-period", "cost-by-model", "cost-by-project", "tools"]:
        c = r["charts"].get(cid)
        assert c and c["width"] > r["clientWidth"] * 0.6 and c["height"] > 50, "%s: %s has no size: %r" % (where, cid, c)
        assert c["right"] <= r["clientWidth"], "%s: %s sticks out: %r" % (where, cid, c)
    unit, slots, active = ("week", expect["weekSlots"], expect["activeWeeks"]) if r["page"] == "report" else \
                          ("day", expect["daySlots"], expect["activeDays"])
    assert ("one bar per %s, %d %ss, %d with activity" % (unit, slots, unit, active)) in r["range"], (where, r["range"])
    # Quiet periods are gaps: bars stand in exactly the active slots, not squeezed side by side.
    for cid in ["cost-by-period", "tokens-by-period"]:
        assert r["charts"][cid]["slots"] == active, "%s: %s bars in %d slots, %d active" % (where, cid, r["charts"][cid]["slots"], active)
        assert r["charts"][cid]["overlaps"] == 0, "%s: %s has %d overlapping date labels" % (where, cid, r["charts"][cid]["overlaps"])
        assert r["charts"][cid]["ticks"] >= 3, "%s: %s has %d date ticks" % (where, cid, r["charts"][cid]["ticks"])
    assert r["charts"]["cumulative-cost"]["line"] > r["clientWidth"] * 0.5, (where, r["charts"]["cumulative-cost"])
    assert r["charts"]["cost-by-model"]["bars"] >= 9 and r["charts"]["tools"]["bars"] >= 3, where
    if r["page"] == "report":
        assert "$7.00" in r["undated"], "%s: undated activity not reported apart: %r" % (where, r["undated"])
        assert "<script>document.title='PWNED'</script>" in r["names"], r["names"]
        assert any(n.startswith("<img src=x") for n in r["names"]), r["names"]
        assert any("<svg onload" in p for p in r["projects"]), r["projects"]
        assert "<script>document.title='PWNED'</script>" in r["labels"], r["labels"]
        assert not any("\x1b" in n or "\x07" in n for n in r["names"] + r["labels"]), "control characters shown"
        # Every id in the table is what `pidx show` takes (all ids share their first 8 characters).
        assert len(r["ids"]) == 6, r["ids"]
        for sid in r["ids"]:
            out = subprocess.run([pidx, "--root", root, "--db", db, "--no-sync", "show", sid], capture_output=True, text=True)
            assert out.returncode == 0, "pidx show %s: %s" % (sid, out.stderr)
PY
if [ -n "${PIDX_KEEP_REPORT:-}" ]; then
  mkdir -p "$PIDX_KEEP_REPORT"
  cp "$work"/*.html "$work"/*.png "$PIDX_KEEP_REPORT/" 2>/dev/null || true
fi
for png in report-800 report-1600 days-800 days-1600; do
  [ -s "$work/$png.png" ] || { echo "report.sh: no screenshot $png.png" >&2; exit 1; }
done
echo "report.sh: charts drawn, quiet periods empty, no payload ran, no overflow at 800 and 1600 px"
