#!/usr/bin/env bash
# Team-tier benchmark, one command for docs/performance.md's table: a seeded corpus (gen_corpus) synced
# into one local index, then pushed to a PostgreSQL server as SOURCES sources (the same index
# each time, `--source bench-N`): push throughput (the first push, an incremental push after 1%
# of the sessions grew by a line, and each further source), then server latency of `list`
# (first page), `search` (a rare, a mid-frequency and a common word, a phrase, a prefix, an `OR`,
# a literal and a regular expression) and `stats`
# over all the sources, with the server's database size. Medians of 5 runs, end to end (process
# start, connection, query, printing).
#
#   bash benches/pg.sh                      # 10,000 sessions, 600M, 10 sources (~100,000 sessions)
#   bash benches/pg.sh 1000 100M 1          # smaller
#   PIDX_BENCH_CHECKPOINTS="1 10" bash benches/pg.sh 10000 30M 100
#                                           # the scaling table in one run: the queries (and an
#                                           # incremental push of 1% of the sessions, and the
#                                           # server's size) after 1 and 10 sources too, not only
#                                           # at the end
#   PIDX_BENCH_UNTIL=20:30 bash benches/pg.sh ...   # push no further source after that time
#                                           # (`date -d`); the queries then run on what is there
#   PIDX_BENCH_HOLD=1 bash benches/pg.sh ...  # at the end, keep the throwaway server up (psql
#                                           # command printed) until `rm` of the file it names
#   PIDX_BENCH_DISTINCT=1 bash benches/pg.sh ...   # each source its own corpus (gen_corpus
#                                           # seed N for source N, its own local index), as a
#                                           # team's machines hold different sessions; without
#                                           # it every source pushes the same index, so each
#                                           # text is on the server once per source
#   PIDX_BENCH_BOUNCER=1 bash benches/pg.sh ...   # the reads also through PgBouncer (Debian's
#                                           # `pgbouncer`, session pooling, installed when missing)
#                                           # in front of the throwaway server: a second column
#   PIDX_BENCH_OLD=/path/to/old/pidx bash benches/pg.sh 1000 100M 1   # + every source pushed by
#                                           # another pidx into a second database, and that
#                                           # pidx's `stats` timed there, side by side
#
# After each table of queries, each search's top 20 is compared with the local index's over
# the union of the pushed corpora (`--redact`, as push redacts): the same entries of the same
# files in the same order, or the first difference.
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
DISTINCT=${PIDX_BENCH_DISTINCT:-0}
# Source N's corpus and index: the first source's (seed 1) for every source unless DISTINCT.
roots=()
corpus() { # N: makes source N's corpus and index when it has its own; sets R, P, mb
  local n=$1
  (( DISTINCT )) || n=0
  R="$W/sessions"; (( n == 0 )) || R="$W/sessions-$n"
  local db="$W/index.db"; (( n == 0 )) || db="$W/index-$n.db"
  P=("$T/pidx" --db "$db" --root "$R")
  # The corpus stays; its index, once pushed, may have gone (below) and is made again.
  [[ -e "$R" ]] || "$T/examples/gen_corpus" --out "$R" --sessions "$SESSIONS" --bytes "$SIZE" --seed $((n + 1)) >/dev/null 2>&1
  [[ -e "$db" ]] || "${P[@]}" sync >/dev/null 2>&1
  mb=$(echo "scale=1; $(du -sb "$R" | cut -f1) / 1000000" | bc)
}
corpus 0
echo "corpus: $SESSIONS sessions, $mb MB of JSONL$( (( DISTINCT )) && echo " (each source its own: seed N+1 for source N)")"
pushed_mb=0
push() { # source number, label
  local t0 t1 s
  corpus "$1"
  [[ " ${roots[*]} " == *" $R "* ]] || roots+=("$R")
  t0=$(now); "${P[@]}" --no-sync push --pg "$PIDX_BENCH_PG" --source "bench-$1" --json >"$W/push.json"; t1=$(now)
  s=$(secs "$t0" "$t1")
  pushed_mb=$(echo "scale=1; $pushed_mb + $mb" | bc)
  # Another source's own index is made again if needed: at 100 sources they are 10 GB.
  (( DISTINCT && $1 > 0 )) && rm -f "${P[2]}"
  echo "| $2 | $s s | $(echo "scale=1; $mb / $s" | bc) MB/s | $(tr -d '\n' <"$W/push.json" | sed -E 's/,?"migrated":\[[0-9,]*\]//') |"
}
# Each search's top 20 on the server against the local index over every pushed corpus.
same_as_local() {
  local u=("$T/pidx" --db "$W/union.db") r q out=()
  # One SQLite index of the union: its first sync grows with it (about 7 minutes at 100,000
  # sessions, 8 GB in 9 minutes and not done at a million), so past PIDX_BENCH_COMPARE_MAX
  # sessions (default 200,000) it is left out and said so.
  if (( ${#roots[@]} * SESSIONS > ${PIDX_BENCH_COMPARE_MAX:-200000} )); then
    echo "top 20 against the local index: not compared ($(( ${#roots[@]} * SESSIONS )) sessions > PIDX_BENCH_COMPARE_MAX=${PIDX_BENCH_COMPARE_MAX:-200000})"
    return 0
  fi
  for r in "${roots[@]}"; do u+=(--root "$r"); done
  "${u[@]}" sync >/dev/null 2>&1
  for q in jalapeño regression function '"the borrow"' 'fil*' 'filter OR value' 're:filter \w+ value' 'literal:filter is'; do
    local a=("$q")
    [[ $q == literal:* ]] && a=(--literal "${q#literal:}")
    "${u[@]}" --no-sync --redact search "${a[@]}" --limit 20 --json >"$W/local.json" 2>/dev/null || true
    "${Q[@]}" search "${a[@]}" --limit 20 --json >"$W/server.json" 2>/dev/null || true
    out+=("$q: $(compare "$W/local.json" "$W/server.json")")
  done
  echo "top 20 against the local index of the union ($(IFS=' '; echo "${#roots[@]}") corpora): $(IFS=';'; echo "${out[*]}" | sed 's/;/; /g')"
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
push 0 "first push (source 1)"
# Append one line to 1% of the sessions, sync, and push source 1 again.
grown=0
incremental() {
  local n=0 last t0 t1
  corpus 0
  while IFS= read -r f; do
    last=$(tail -n 1 "$f" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p' | head -1)
    printf '{"type":"message","id":"bench%06d","parentId":"%s","timestamp":"2026-11-01T00:00:00.000Z","message":{"role":"user","content":"appended","timestamp":1}}\n' "$grown" "$last" >>"$f"
    n=$((n + 1)); grown=$((grown + 1))
  done < <(find "$R" -name '*.jsonl' | sort | awk 'NR % 100 == 0')
  "${P[@]}" sync >/dev/null 2>&1
  t0=$(now); "${P[@]}" --no-sync push --pg "$PIDX_BENCH_PG" --source bench-0 --json >"$W/push.json"; t1=$(now)
  echo "| incremental push ($n sessions grew by one line)$1 | $(secs "$t0" "$t1") s | | $(tr -d '\n' <"$W/push.json") |"
}
incremental ""
Q=("$T/pidx" --pg "$PIDX_BENCH_PG")
# PgBouncer in session mode: each `pidx` run is one session, served by a backend the pool keeps
# between runs, whose catalog caches are warm (a new backend reads every partition's and
# index's description before its first plans: most of a search's time at 100,000 sessions).
B=()
if [[ -n "${PIDX_BENCH_BOUNCER:-}" && -n "${PG_TMP:-}" ]]; then
  if ! command -v pgbouncer >/dev/null && ! [[ -x /usr/sbin/pgbouncer ]]; then
    (apt-get install -y -qq pgbouncer >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq pgbouncer >/dev/null 2>&1)) || true
  fi
  if [[ -x /usr/sbin/pgbouncer ]]; then
    mkdir -p "$W/pgb"
    bport=$((PG_PORT + 1))
    cat >"$W/pgb/pgbouncer.ini" <<INI
[databases]
pidx = host=$PG_TMP port=$PG_PORT dbname=pidx
[pgbouncer]
listen_addr =
unix_socket_dir = $W/pgb
listen_port = $bport
auth_type = trust
auth_file = $W/pgb/users.txt
pool_mode = session
server_reset_query = DISCARD ALL
logfile = $W/pgb/pgbouncer.log
pidfile = $W/pgb/pgbouncer.pid
INI
    printf '"pidx_writer" ""\n' >"$W/pgb/users.txt"
    chmod 755 "$W" "$W/pgb"
    [[ $(id -u) -eq 0 ]] && chown -R postgres "$W/pgb"
    "${PG_RUN[@]}" /usr/sbin/pgbouncer -d "$W/pgb/pgbouncer.ini"
    trap 'kill "$(cat "$W/pgb/pgbouncer.pid" 2>/dev/null)" 2>/dev/null; pg_stop; rm -rf "$W"' EXIT
    B=("$T/pidx" --pg "postgresql:///pidx?host=$W/pgb&port=$bport&user=pidx_writer")
  else
    echo "PIDX_BENCH_BOUNCER: no pgbouncer and apt-get could not install it; the reads only direct"
  fi
fi
# A row of the reads' table: its median direct, and through PgBouncer when there is one.
row() {
  local label=$1
  shift
  if (( ${#B[@]} )); then
    echo "| $label | $(median "${Q[@]}" "$@") ms | $(median "${B[@]}" "$@") ms |"
  else
    echo "| $label | $(median "${Q[@]}" "$@") ms |"
  fi
}
# The reading commands over what the server holds now (the sources pushed so far) and its size.
queries() {
  local total size
  total=$("${Q[@]}" sql "SELECT count(*) FROM sessions" --json | tr -dc '0-9')
  size=$("${Q[@]}" sql "SELECT pg_database_size(current_database()) AS b" --json | tr -dc '0-9')
  echo
  echo "server: $1 sources, $total sessions, $pushed_mb MB of JSONL pushed, database $(echo "scale=1; $size / 1000000" | bc) MB; $(date -u +%T), load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
  if (( ${#B[@]} )); then
    echo "| query | median of 5 | through PgBouncer |"
    echo "|---|---|---|"
  else
    echo "| query | median of 5 |"
    echo "|---|---|"
  fi
  row "\`list --all --limit 50\` (first page)" list --all --limit 50
  row "\`search jalapeño\` (rare word, top 20)" search jalapeño
  row "\`search regression\` (mid-frequency word, top 20)" search regression
  row "\`search function\` (common word, top 20)" search function
  row "\`search '\"the borrow\"'\` (phrase, top 20)" search '"the borrow"'
  row "\`search 'fil*'\` (prefix, top 20)" search 'fil*'
  row "\`search 'filter OR value'\` (top 20)" search 'filter OR value'
  row "\`search --literal 'filter is'\` (newest 20)" search --literal 'filter is'
  row "\`search 're:filter \\w+ value'\` (newest 20)" search 're:filter \w+ value'
  row "\`stats\`" stats
  row "\`stats --by source\`" stats --by source
  row "\`stats --by day\`" stats --by day
  if (( total <= 20000 )); then # reads each session's text from the server: minutes beyond that
    a=$(now); "${Q[@]}" list --all --query 'function' --limit 20 >/dev/null 2>&1 || true; b=$(now)
    echo "| \`list --all --query function --limit 20\` (one run: each session's text read from the server) | $(echo "($b - $a) * 1000" | bc | xargs printf '%.0f') ms |"
  fi
  if (( total <= 100000 )); then # each a search to a thousand hits: an hour at a million sessions
    local h=()
    for q in jalapeño regression function '"the borrow"'; do
      h+=("$q $("${Q[@]}" search "$q" --limit 1000 --json | grep -o '"entryId"' | wc -l || true)")
    done
    echo "hits (of at most 1000): $(IFS=,; echo "${h[*]}" | sed 's/,/, /g')"
  fi
  same_as_local
}
# An incremental push at the server's present size (after the first source's, done above).
incremental_at() {
  (( $1 > 1 )) || return 0
  echo
  echo "| push | time | JSONL rate | report |"
  echo "|---|---|---|---|"
  incremental " at $1 sources"
}
checkpoint() { [[ " ${PIDX_BENCH_CHECKPOINTS:-} " == *" $1 "* ]]; }
pushed=1
checkpoint 1 && queries 1
until=""
[[ -n "${PIDX_BENCH_UNTIL:-}" ]] && until=$(date -d "$PIDX_BENCH_UNTIL" +%s)
for i in $(seq 1 $((SOURCES - 1))); do
  if [[ -n "$until" ]] && (( $(date +%s) >= until )); then
    echo "(PIDX_BENCH_UNTIL=$PIDX_BENCH_UNTIL reached: stopping at $pushed of $SOURCES sources)"
    break
  fi
  push "$i" "first push of source $((i + 1))"
  pushed=$((i + 1))
  if checkpoint "$pushed" && (( pushed < SOURCES )); then
    queries "$pushed"
    incremental_at "$pushed"
    echo
    echo "| push | time | JSONL rate | report |"
    echo "|---|---|---|---|"
  fi
done
if [[ -n "${PIDX_BENCH_OLD:-}" ]]; then
  "$PIDX_BENCH_OLD" --db "$W/index.db" --root "$W/sessions" --no-sync push --pg "$OLD_PG" --source bench-0 >/dev/null
  for i in $(seq 1 $((pushed - 1))); do
    corpus "$i"
    "$PIDX_BENCH_OLD" "${P[@]:1}" --no-sync push --pg "$OLD_PG" --source "bench-$i" >/dev/null
  done
fi
queries "$pushed"
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
incremental_at "$pushed"
if [[ -n "${PIDX_BENCH_HOLD:-}" && -n "${PG_TMP:-}" ]]; then
  touch "$W/hold"
  echo "holding the server: $BIN/psql -h $PG_TMP -p $PG_PORT -U postgres pidx; rm $W/hold to stop" >&2
  while [[ -e "$W/hold" ]]; do sleep 5; done
fi
