#!/usr/bin/env bash
# Team-tier benchmark, one command for docs/performance.md's table: a seeded corpus (gen_corpus) synced
# into one local index, then pushed to a PostgreSQL server as SOURCES sources (the same index
# each time, `--source bench-N`): push throughput (the first push, an incremental push after 1%
# of the sessions grew by a line, and each further source), then server latency of `list`
# (first page), `search` (a rare and a common word) and `stats` over all the sources. Medians
# of 5 runs, end to end (process start, connection, query, printing).
#
#   bash benches/pg.sh                      # 10,000 sessions, 600M, 10 sources (~100,000 sessions)
#   bash benches/pg.sh 1000 100M 1          # smaller
#   PIDX_BENCH_OLD=/path/to/old/pidx bash benches/pg.sh 1000 100M 1   # + every source pushed by
#                                           # another pidx into a second database, and that
#                                           # pidx's `stats` timed there, side by side
#
# The server is a throwaway one (tests/pg/server.sh: Debian's postgresql, default settings but
# for a unix socket) unless PIDX_BENCH_PG names an empty database. Release build; on a shared
# 2-core machine expect noise (the load average is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
SESSIONS=${1:-10000}
SIZE=${2:-600M}
SOURCES=${3:-10}
cargo build --release --bin pidx --example gen_corpus >/dev/null 2>&1
T=${CARGO_TARGET_DIR:-target}/release
W=$(mktemp -d /tmp/pidx-pg-bench.XXXXXX)
if [[ -z "${PIDX_BENCH_PG:-}" ]]; then
  pg_skip() { echo "benches/pg.sh: no PostgreSQL server: $*" >&2; exit 1; }
  PG_TMP_PREFIX=/tmp/pidx-pg-bench-server
  source tests/pg/server.sh
  pg_start
  trap 'pg_stop; rm -rf "$W"' EXIT
  PIDX_BENCH_PG="postgresql:///pidx?host=$PG_TMP&port=$PG_PORT&user=pidx_writer"
else
  trap 'rm -rf "$W"' EXIT
fi
source benches/timing.sh
secs() { echo "$2 - $1" | bc; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
"$T/examples/gen_corpus" --out "$W/sessions" --sessions "$SESSIONS" --bytes "$SIZE" --seed 1 >/dev/null
P=("$T/pidx" --db "$W/index.db" --root "$W/sessions")
"${P[@]}" sync >/dev/null 2>&1
bytes=$(du -sb "$W/sessions" | cut -f1)
mb=$(echo "scale=1; $bytes / 1000000" | bc)
echo "corpus: $SESSIONS sessions, $mb MB of JSONL"
push() { # source, label
  local t0 t1 s
  t0=$(now); "${P[@]}" --no-sync push --pg "$PIDX_BENCH_PG" --source "$1" --json >"$W/push.json"; t1=$(now)
  s=$(secs "$t0" "$t1")
  echo "| $2 | $s s | $(echo "scale=1; $mb / $s" | bc) MB/s | $(tr -d '\n' <"$W/push.json" | sed -E 's/,?"migrated":\[[0-9,]*\]//') |"
}
if [[ -n "${PIDX_BENCH_OLD:-}" ]]; then
  OLD_PG=${PIDX_BENCH_PG/\/\/\/pidx\?/\/\/\/pidx_old?}
  "$BIN/psql" -h "$PG_TMP" -p "$PG_PORT" -U postgres -qc "CREATE DATABASE pidx_old OWNER pidx_writer" postgres
  t0=$(now); "$PIDX_BENCH_OLD" --db "$W/index.db" --root "$W/sessions" --no-sync push --pg "$OLD_PG" --source bench-0 >/dev/null; t1=$(now)
  s=$(secs "$t0" "$t1")
  echo "| first push, $PIDX_BENCH_OLD | $s s | $(echo "scale=1; $mb / $s" | bc) MB/s | |"
fi
echo "| push | time | JSONL rate | report |"
echo "|---|---|---|---|"
push bench-0 "first push (source 1)"
# Append one line to 1% of the sessions, then push again.
n=0
while IFS= read -r f; do
  last=$(tail -n 1 "$f" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p' | head -1)
  printf '{"type":"message","id":"bench%05d","parentId":"%s","timestamp":"2026-11-01T00:00:00.000Z","message":{"role":"user","content":"appended","timestamp":1}}\n' "$n" "$last" >>"$f"
  n=$((n + 1))
done < <(find "$W/sessions" -name '*.jsonl' | sort | awk 'NR % 100 == 0')
"${P[@]}" sync >/dev/null 2>&1
t0=$(now); "${P[@]}" --no-sync push --pg "$PIDX_BENCH_PG" --source bench-0 --json >"$W/push.json"; t1=$(now)
echo "| incremental push ($n sessions grew by one line) | $(secs "$t0" "$t1") s | | $(tr -d '\n' <"$W/push.json") |"
for i in $(seq 1 $((SOURCES - 1))); do
  push "bench-$i" "first push of source $((i + 1))"
done
if [[ -n "${PIDX_BENCH_OLD:-}" ]]; then
  "$PIDX_BENCH_OLD" --db "$W/index.db" --root "$W/sessions" --no-sync push --pg "$OLD_PG" --source bench-0 >/dev/null
  for i in $(seq 1 $((SOURCES - 1))); do
    "$PIDX_BENCH_OLD" --db "$W/index.db" --root "$W/sessions" --no-sync push --pg "$OLD_PG" --source "bench-$i" >/dev/null
  done
fi
Q=("$T/pidx" --pg "$PIDX_BENCH_PG")
total=$("${Q[@]}" sql "SELECT count(*) FROM sessions" --json | tr -dc '0-9')
echo
echo "server: $SOURCES sources, $total sessions; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| query | median of 5 |"
echo "|---|---|"
echo "| \`list --all --limit 50\` (first page) | $(median "${Q[@]}" list --all --limit 50) ms |"
echo "| \`search jalapeño\` (rare word, top 20) | $(median "${Q[@]}" search jalapeño) ms |"
echo "| \`search function\` (common word, top 20) | $(median "${Q[@]}" search function) ms |"
echo "| \`stats\` | $(median "${Q[@]}" stats) ms |"
echo "| \`stats --by source\` | $(median "${Q[@]}" stats --by source) ms |"
echo "| \`stats --by day\` | $(median "${Q[@]}" stats --by day) ms |"
a=$(now); "${Q[@]}" list --all --query 'function' --limit 20 >/dev/null 2>&1 || true; b=$(now)
echo "| \`list --all --query function --limit 20\` (one run: each session's text read from the server) | $(echo "($b - $a) * 1000" | bc | xargs printf '%.0f') ms |"
if [[ -n "${PIDX_BENCH_OLD:-}" ]]; then
  O=("$PIDX_BENCH_OLD" --pg "$OLD_PG")
  echo "| \`stats\`, $PIDX_BENCH_OLD | $(median "${O[@]}" stats) ms |"
  echo "| \`stats --by source\`, $PIDX_BENCH_OLD | $(median "${O[@]}" stats --by source) ms |"
  echo "| \`stats --by day\`, $PIDX_BENCH_OLD | $(median "${O[@]}" stats --by day) ms |"
  "${Q[@]}" stats --by source,day --json >"$W/new.json"
  "${O[@]}" stats --by source,day --json >"$W/old.json"
  python3 - "$W/new.json" "$W/old.json" <<'PY'
import json, sys
new, old = (json.load(open(f)) for f in sys.argv[1:])
same = len(new) == len(old) and all(
    abs(a.pop("cost") - b.pop("cost")) < 1e-6 and a == b for a, b in zip(new, old))
print(f"stats --by source,day: {len(new)} rows, {'the same figures from both' if same else 'DIFFERENT figures'}")
PY
fi
echo "hits: jalapeño $("${Q[@]}" search jalapeño --limit 1000 --json | grep -o '"entryId"' | wc -l) (of at most 1000), function $("${Q[@]}" search function --limit 1000 --json | grep -o '"entryId"' | wc -l)"
