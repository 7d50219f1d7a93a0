#!/usr/bin/env bash
# Team-tier benchmark: push throughput (first and incremental) and server latency of list (first
# page), search (rare and common word) and stats, on a generated corpus.
#
#   PIDX_BENCH_PG=postgresql:///pidx?host=/tmp/pg&user=pidx_writer bash benches/pg.sh SESSIONS SIZE
#
# The database should be empty (each run pushes as source bench-<n>). Release build; medians of
# 5 runs; on a shared 2-core machine expect noise.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${PIDX_BENCH_PG:?set PIDX_BENCH_PG to a writer URL of an empty database}"
SESSIONS=${1:-2000}
SIZE=${2:-200M}
cargo build --release --bin pidx --example gen_corpus >/dev/null 2>&1
T=${CARGO_TARGET_DIR:-target}/release
W=$(mktemp -d /tmp/pidx-pg-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
"$T/examples/gen_corpus" --out "$W/sessions" --sessions "$SESSIONS" --bytes "$SIZE" >/dev/null
P=("$T/pidx" --db "$W/index.db" --root "$W/sessions")
"${P[@]}" sync >/dev/null 2>&1
bytes=$(du -sb "$W/sessions" | cut -f1)
now() { date +%s.%N; }
t0=$(now); "${P[@]}" --no-sync push --pg "$PIDX_BENCH_PG" --source bench-0 >"$W/push1"; t1=$(now)
echo "first push: $SESSIONS sessions, $((bytes / 1048576)) MiB JSONL: $(echo "$t1 - $t0" | bc) s ($(cat "$W/push1"))"
# Append one line to 1% of the sessions, then push again.
n=0
while IFS= read -r f; do
  last=$(tail -n 1 "$f" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p' | head -1)
  printf '{"type":"message","id":"bench%05d","parentId":"%s","timestamp":"2026-11-01T00:00:00.000Z","message":{"role":"user","content":"appended","timestamp":1}}\n' "$n" "$last" >>"$f"
  n=$((n + 1))
done < <(find "$W/sessions" -name '*.jsonl' | sort | awk 'NR % 100 == 0')
"${P[@]}" sync >/dev/null 2>&1
t0=$(now); "${P[@]}" --no-sync push --pg "$PIDX_BENCH_PG" --source bench-0 >"$W/push2"; t1=$(now)
echo "incremental push ($n sessions grown by one line): $(echo "$t1 - $t0" | bc) s ($(cat "$W/push2"))"
median() {
  local times=()
  for _ in 1 2 3 4 5; do
    local a b; a=$(now); "$@" >/dev/null 2>&1 || true; b=$(now)
    times+=("$(echo "($b - $a) * 1000" | bc)")
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n 3p
}
Q=("$T/pidx" --pg "$PIDX_BENCH_PG")
echo "list --all --limit 50: $(median "${Q[@]}" list --all --limit 50) ms"
echo "search rare (appended): $(median "${Q[@]}" search appended) ms"
echo "search common (the): $(median "${Q[@]}" search the) ms"
echo "stats: $(median "${Q[@]}" stats) ms"
echo "stats --by source: $(median "${Q[@]}" stats --by source) ms"
