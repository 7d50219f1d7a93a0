#!/usr/bin/env bash
# Peak RSS of pidx on the huge-lines session: one user message of one text line of MB megabytes (words
# and escaped newlines, as a pasted log) and one of a base64 image line of the same size, the
# session examples/bench/lines.rs writes. Measures a cold `sync` into a new index, then
# `context --json`, the readable `context` and a `search` of a word of the huge text, each with
# /usr/bin/time -v (maximum resident set size), RUNS times, and prints the median of each.
# With --check it fails when a median is over LIMIT MB (the bound of docs/performance.md); it
# asserts no time.
#   benches/huge-rss.sh [--pidx BIN] [--mb 100] [--runs 3] [--limit 200] [--check]
# .ci/run calls it with --runs 1 --check on the release build tiny.sh built (budget: 2 minutes;
# its time is in docs/performance.md).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pidx="$here/../target/release/pidx"
mb=100
runs=3
limit=200
check=
while [ $# -gt 0 ]; do
  case "$1" in
    --pidx) pidx="$2"; shift 2 ;;
    --mb) mb="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --limit) limit="$2"; shift 2 ;;
    --check) check=1; shift ;;
    *) echo "huge-rss.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x /usr/bin/time ] || { echo "SKIPPED: huge-rss.sh needs /usr/bin/time (apt-get install time)"; exit 0; }
[ -x "$pidx" ] || { echo "huge-rss.sh: no pidx binary at $pidx (cargo build --release)" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/pidx-huge-rss-XXXXXX")"
trap 'rm -rf "$work"' EXIT
root="$work/sessions"
id=0000aaaa-0000-4000-8000-000000000001
file="$root/--huge-lines--/2026-01-01T00-00-00-000Z_$id.jsonl"
mkdir -p "$(dirname "$file")"
python3 - "$file" "$((mb << 20))" <<'EOF'
import sys
path, size = sys.argv[1], int(sys.argv[2])
words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]
parts, n, i = [], 0, 0
while n < size:
    p = words[i % 7] + ("\\n" if i % 12 == 11 else " ") + str(i % 9973) + " "
    parts.append(p)
    n += len(p)
    i += 1
text = "".join(parts)
del parts
image = ("iVBORw0KGgoAAAANSUhEUgAA" * (size // 24 + 1))[:size]
with open(path, "w") as out:
    out.write('{"type":"session","version":3,"id":"%s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/huge/lines"}\n' % "0000aaaa-0000-4000-8000-000000000001")
    out.write('{"type":"message","id":"a0000001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"')
    out.write(text)
    out.write('"}],"timestamp":1767225601000}}\n')
    del text
    out.write('{"type":"message","id":"a0000002","parentId":"a0000001","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":[{"type":"image","data":"')
    out.write(image)
    out.write('","mimeType":"image/png"},{"type":"text","text":"what is on this screenshot?"}],"timestamp":1767225602000}}\n')
    out.write('{"type":"message","id":"a0000003","parentId":"a0000002","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"A terminal."}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":3,"cacheRead":0,"cacheWrite":0,"totalTokens":13,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1767225603000}}\n')
EOF

# Peak RSS in MB (KB / 1024) of one run of pidx with the given arguments; its output is thrown
# away, its failure fails the script.
rss() {
  local log="$work/time.log"
  if ! /usr/bin/time -v -o "$log" "$pidx" --root "$root" --db "$work/index.db" "$@" >/dev/null 2>"$work/err"; then
    # exit 1 is `search`'s "no hits"
    if ! { [ "$1" = --no-sync ] && [ "$2" = search ] && grep -q 'Exit status: 1' "$log"; }; then
      echo "huge-rss.sh: pidx $* failed:" >&2
      cat "$work/err" >&2
      exit 1
    fi
  fi
  awk -F': ' '/Maximum resident set size/ {printf "%.0f\n", $2 / 1024}' "$log"
}

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

declare -A peaks
names=(sync "context --json" context search)
for ((r = 1; r <= runs; r++)); do
  rm -f "$work"/index.db*
  peaks[sync]+="$(rss sync) "
  peaks["context --json"]+="$(rss --no-sync context "$file" --leaf a0000003 --json) "
  peaks[context]+="$(rss --no-sync context "$file" --leaf a0000003) "
  peaks[search]+="$(rss --no-sync search foxtrot --limit 5) "
done

status=0
echo "huge-rss: a ${mb} MB text line and a ${mb} MB image line, peak RSS (MB) of $runs runs, median (limit ${limit} MB)"
for name in "${names[@]}"; do
  m="$(tr ' ' '\n' <<<"${peaks[$name]}" | grep . | median)"
  verdict=ok
  if [ "$m" -gt "$limit" ]; then
    verdict="OVER ${limit} MB"
    status=1
  fi
  printf '  %-15s %5s MB  (runs: %s) %s\n' "$name" "$m" "${peaks[$name]% }" "$verdict"
done
if [ -n "$check" ]; then
  exit "$status"
fi
