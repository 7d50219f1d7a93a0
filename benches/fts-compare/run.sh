#!/usr/bin/env bash
# One command for the engine comparison of docs/search.md ("Choosing the engine", issue 39):
# texts out of a pidx index, each engine built from them under /usr/bin/time -v (peak RSS),
# then every query class on FTS5 (the pidx index itself, read-only), Tantivy and the own
# index, with `rg -l` on the corpus and each top 20 checked against a brute-force ranking.
#
#   benches/fts-compare/run.sh [--db INDEX.db] [--corpus SESSIONS] [--work DIR] [--runs N]
#                              [--batch-mb 8] [--threads 1]
#
# Defaults: the 10,000-session corpus, /tmp/web-bench/{index.db,sessions}; work in
# /tmp/fts-compare. Writes WORK/results.md. Never writes to the index or the sessions.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
db=/tmp/web-bench/index.db corpus=/tmp/web-bench/sessions work=/tmp/fts-compare
runs=20 batch=8 threads=1
while [ $# -gt 0 ]; do
  case "$1" in
    --db) db="$2"; shift 2 ;;
    --corpus) corpus="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --batch-mb) batch="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/target}"
(cd "$here" && cargo build --release --locked)
bin="$CARGO_TARGET_DIR/release/fts-compare"
mkdir -p "$work"
out="$work/results.md"
rss() { awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$1"; }
cpu() { awk -F': ' '/User time|System time/ {s += $2} END {printf "%.1f", s}' "$1"; }
{
  echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(uname -sr); $(date -u '+%Y-%m-%d %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "Corpus: $corpus ($(du -sh "$corpus" | cut -f1)), index $db"
  echo
} > "$out"
if [ ! -f "$work/texts.bin" ]; then
  /usr/bin/time -v "$bin" extract --db "$db" --dir "$work" 2> "$work/extract.time" | tee -a "$out"
  echo "extract peak RSS $(rss "$work/extract.time") MB" | tee -a "$out"
fi
echo >> "$out"
echo '| engine | build s (wall) | MB of text/s | MB of JSONL/s | CPU s | MB of JSONL per CPU s | index MB | x JSONL | commits | peak RSS MB |' >> "$out"
echo '|---|---|---|---|---|---|---|---|---|---|' >> "$out"
for engine in ${ENGINES:-fts5 own own-merged tantivy}; do
  # A build's pages are not in the cache of the next: each starts from the dump alone.
  /usr/bin/time -v "$bin" build --engine "$engine" --dir "$work" --batch-mb "$batch" --threads "$threads" \
    2> "$work/build-$engine.time" > "$work/build-$engine.json"
  python3 - "$work/build-$engine.json" "$(rss "$work/build-$engine.time")" "$(cpu "$work/build-$engine.time")" "$(cat "$work/jsonl_bytes")" >> "$out" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
cpu, jsonl = float(sys.argv[3]), float(sys.argv[4])
t = b['threads']
print(f"| {b['engine']} ({t} thread{'s' if t > 1 else ''}) | {b['secs']} | {b['text_mb_s']} | {b['jsonl_mb_s']} | {cpu} | {jsonl / 1e6 / cpu:.1f} | {b['size_mb']} | {b['size_x_jsonl']} | {b['commits']} | {sys.argv[2]} |")
PY
  tail -1 "$out"
done
# Tantivy with fewer commits and with two writer threads (built aside: the query uses the above).
if [ -z "${ENGINES:-}" ]; then
  mkdir -p "$work/variant"
  ln -sf "$work/texts.bin" "$work/variant/texts.bin"
  cp "$work/jsonl_bytes" "$work/variant/"
  for v in "64 1" "8 2" "64 2"; do
    set -- $v
    /usr/bin/time -v "$bin" build --engine tantivy --dir "$work/variant" --batch-mb "$1" --threads "$2" \
      --heap-mb $((64 * $2)) 2> "$work/variant/build.time" > "$work/variant/build.json"
    python3 - "$work/variant/build.json" "$(rss "$work/variant/build.time")" "$(cpu "$work/variant/build.time")" "$(cat "$work/jsonl_bytes")" >> "$out" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
cpu, jsonl = float(sys.argv[3]), float(sys.argv[4])
print(f"| tantivy, {b['batch_mb']} MB commits, {b['threads']} threads | {b['secs']} | {b['text_mb_s']} | {b['jsonl_mb_s']} | {cpu} | {jsonl / 1e6 / cpu:.1f} | {b['size_mb']} | {b['size_x_jsonl']} | {b['commits']} | {sys.argv[2]} |")
PY
    tail -1 "$out"
  done
  rm -rf "$work/variant"
fi
echo >> "$out"
# rg -l with the corpus in the page cache.
rg -l -F zzzz-warm-the-cache "$corpus" > /dev/null || true
"$bin" query --dir "$work" --db "$db" --runs "$runs" --corpus "$corpus" | tee -a "$out"
echo "run.sh: results in $out" >&2
