#!/usr/bin/env bash
# The server's ranking against the local one, and what it costs (issue 52): a seeded corpus
# (gen_corpus) split by project folder into two halves, each synced into its own index and
# pushed as its own source, and one local index synced over the whole corpus. For each query,
# `pidx --pg URL search Q --json` is compared with the local `pidx search Q --json` (top 20:
# session file, entry and kind, in order), and the three are timed end to end (medians of 5:
# process start, connection, query, printing). With PIDX_BENCH_OLD=/path/to/pidx the same two
# sources are pushed by that pidx into a second database and its `--pg search` is compared and
# timed too, side by side, with the server's size of the texts table in each.
#
#   bash benches/pg_rank.sh                     # 2,000 sessions, 200M
#   bash benches/pg_rank.sh 500 50M             # smaller
#   PIDX_BENCH_OLD=/tmp/old-pidx bash benches/pg_rank.sh
#
# A throwaway server (tests/pg/server.sh: Debian's postgresql, default settings on a unix
# socket). Release build; on the shared 2-core machine expect noise (the load is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
SESSIONS=${1:-2000}
SIZE=${2:-200M}
cargo build --release --bin pidx --example gen_corpus >/dev/null 2>&1
T=${CARGO_TARGET_DIR:-target}/release
W=$(mktemp -d /tmp/pidx-pg-rank.XXXXXX)
pg_skip() { echo "benches/pg_rank.sh: no PostgreSQL server: $*" >&2; exit 1; }
PG_TMP_PREFIX=/tmp/pidx-pg-rank-server
source tests/pg/server.sh
pg_start
trap 'pg_stop; rm -rf "$W"' EXIT
URL="postgresql:///pidx?host=$PG_TMP&port=$PG_PORT&user=pidx_writer"
OLD_URL="postgresql:///pidx_old?host=$PG_TMP&port=$PG_PORT&user=pidx_writer"
source benches/timing.sh
echo "machine: $(nproc) cores, $(date -u +%F), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
"$T/examples/gen_corpus" --out "$W/all/sessions" --sessions "$SESSIONS" --bytes "$SIZE" --seed 1 >/dev/null
mkdir -p "$W/a/sessions" "$W/b/sessions"
n=0
while IFS= read -r d; do
  if (( n % 2 )); then cp -a "$d" "$W/b/sessions/"; else cp -a "$d" "$W/a/sessions/"; fi
  n=$((n + 1))
done < <(find "$W/all/sessions" -mindepth 1 -maxdepth 1 -type d | sort)
for h in all a b; do
  "$T/pidx" --db "$W/$h/index.db" --root "$W/$h/sessions" sync >/dev/null 2>&1
done
echo "corpus: $SESSIONS sessions, $(du -sm "$W/all/sessions" | cut -f1) MiB of JSONL, $n projects split into two sources"
push() { # pidx, url, label
  local t0 t1
  t0=$(now)
  for h in a b; do
    "$1" --db "$W/$h/index.db" --root "$W/$h/sessions" --no-sync push --pg "$2" --source "half-$h" >/dev/null
  done
  t1=$(now)
  echo "| push of both sources, $3 | $(echo "$t1 - $t0" | bc) s |"
}
echo "| step | time |"
echo "|---|---|"
push "$T/pidx" "$URL" "this pidx"
if [[ -n "${PIDX_BENCH_OLD:-}" ]]; then
  "$BIN/psql" -h "$PG_TMP" -p "$PG_PORT" -U postgres -qc "CREATE DATABASE pidx_old OWNER pidx_writer" postgres
  push "$PIDX_BENCH_OLD" "$OLD_URL" "$PIDX_BENCH_OLD"
fi
size() { "$BIN/psql" -h "$PG_TMP" -p "$PG_PORT" -U postgres -d "$1" -Atc "SELECT pg_size_pretty(pg_total_relation_size('entry_text'))
  || coalesce(', text_heads ' || pg_size_pretty(pg_total_relation_size(to_regclass('text_heads'))), '')
  || ', database ' || pg_size_pretty(pg_database_size(current_database()))"; }
echo "entry_text on the server: $(size pidx) with this pidx${PIDX_BENCH_OLD:+; $(size pidx_old) with $PIDX_BENCH_OLD}"
L=("$T/pidx" --db "$W/all/index.db" --root "$W/all/sessions" --no-sync)
S=("$T/pidx" --db "$W/a/index.db" --root "$W/a/sessions" --no-sync --pg "$URL")
O=("${PIDX_BENCH_OLD:-false}" --db "$W/a/index.db" --root "$W/a/sessions" --no-sync --pg "$OLD_URL")
echo
echo "| query | local | --pg, this pidx | top 20 vs local${PIDX_BENCH_OLD:+ | --pg, old | old top 20 vs local}|"
echo "|---|---|---|---${PIDX_BENCH_OLD:+|---|---}|"
cwd=$("${L[@]}" list --all --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["cwd"])')
for q in jalapeño function the '"the borrow"' 'parse line' 'borrow lifetime' '"parse line"' 'function|--cwd' 'function|--since 2026-09-01'; do
  words=("${q%%|*}")
  case "$q" in
    *'|--cwd') words+=(--cwd "$cwd") ;;
    *'|'*) read -r -a more <<<"${q#*|}"; words+=("${more[@]}") ;;
  esac
  args=(search)
  args+=("${words[@]}" --limit 20)
  "${L[@]}" "${args[@]}" --json >"$W/local.json" || true
  "${S[@]}" "${args[@]}" --json >"$W/new.json" || true
  row="| \`${words[*]}\` | $(median "${L[@]}" "${args[@]}") ms | $(median "${S[@]}" "${args[@]}") ms | $(compare "$W/local.json" "$W/new.json")"
  if [[ -n "${PIDX_BENCH_OLD:-}" ]]; then
    "${O[@]}" "${args[@]}" --json >"$W/old.json" || true
    row+=" | $(median "${O[@]}" "${args[@]}") ms | $(compare "$W/local.json" "$W/old.json")"
  fi
  echo "$row |"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
