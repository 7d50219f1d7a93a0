#!/usr/bin/env bash
# Each kind of server search, timed: literals (whole words, a prefix at the end, a piece inside
# one word), patterns with and without literal runs, a prefix, OR, NOT, a word and a phrase, on
# a throwaway PostgreSQL holding one source of generated sessions (gen_corpus, seed 7), each
# run from process start to exit; then, with LIMITED=1, three of them as a reader limited to
# that source (`team add-member --reads`). Prints the words' counts of texts and each search's
# median, hits and runs. Speed of the reads only: the ranking is the tests' (tests/it/pg_rank.rs).
#
#   bash benches/pg_search_kinds.sh                   # 10,000 sessions, 200M, 5 runs
#   bash benches/pg_search_kinds.sh 10000 200M 7
#   PIDX_BIN=/path/to/other/pidx bash benches/pg_search_kinds.sh   # another build
#   PIDX_BENCH_OLD=/path/to/old/pidx bash benches/pg_search_kinds.sh
#                                 # each search by that build too, on the same server, the two
#                                 # runs alternating: a second median and the ratio
# Each line ends with the same search's median on the local index that was pushed (the runs
# alternating with the server's): what the server's answer costs beside the local one.
set -euo pipefail
cd "$(dirname "$0")/.."
SESSIONS=${1:-10000}
SIZE=${2:-200M}
runs=${3:-5}
source benches/pg_throwaway.sh
pg_throwaway pgkinds
C=${PIDX_BENCH_CORPUS:-$W/s}
if [[ -z "${PIDX_BENCH_CORPUS:-}" ]]; then
  "$T/examples/gen_corpus" --out "$C" --sessions "$SESSIONS" --bytes "$SIZE" --seed 7 >/dev/null
fi
L=("$P" --db "$W/index.db" --root "$C")
HOME=$W "${L[@]}" sync >/dev/null 2>&1
/usr/bin/time -f "push: %e s wall" env HOME="$W" "${L[@]}" --no-sync push --pg "$URL" --source one >/dev/null
PSQL=("$BIN/psql" -h "$PG_TMP" -p "$PG_PORT" -U postgres pidx)
"${PSQL[@]}" -q -c "VACUUM ANALYZE"
"${PSQL[@]}" -Atc "SELECT string_agg(term || ' ' || n, ', ' ORDER BY term) FROM (SELECT term, sum(n) n FROM word_texts
  WHERE term IN ('quigrichu', 'filter', 'the', 'is', 'src', 'components', 'read', 'value') GROUP BY term) w" \
  -c "SELECT count(*) || ' texts' FROM entry_text"
q() {
  local name=$1; shift
  local ts=() old=() loc=() n=0 m=0
  for _ in $(seq 1 "$runs"); do
    s=$(date +%s%N)
    HOME=$W "${L[@]}" --no-sync --json search --limit 20 "$@" >/dev/null 2>&1 || true
    e=$(date +%s%N)
    loc+=($(( (e - s) / 1000000 )))
    s=$(date +%s%N)
    n=$(HOME=$W "${L[@]}" --no-sync --pg "$URL" --json search --limit 20 "$@" 2>/dev/null | grep -o '"path"' | wc -l) || true  # no hit: pidx and grep exit 1
    e=$(date +%s%N)
    ts+=($(( (e - s) / 1000000 )))
    if [[ -n "${PIDX_BENCH_OLD:-}" ]]; then
      s=$(date +%s%N)
      m=$(HOME=$W "$PIDX_BENCH_OLD" --db "$W/index.db" --root "$C" --no-sync --pg "$URL" --json search --limit 20 "$@" 2>/dev/null | grep -o '"path"' | wc -l) || true  # no hit: pidx and grep exit 1
      e=$(date +%s%N)
      old+=($(( (e - s) / 1000000 )))
    fi
  done
  med=$(printf "%s\n" "${ts[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
  lmed=$(printf "%s\n" "${loc[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
  if [[ -n "${PIDX_BENCH_OLD:-}" ]]; then
    omed=$(printf "%s\n" "${old[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
    printf "%-34s median %5d ms, old %5d ms (%sx)  (hits %s, old %s; %s / %s); local %d ms\n" "$name" "$med" "$omed" \
      "$(echo "scale=1; $omed / ($med + 0.001)" | bc)" "$n" "$m" "${ts[*]}" "${old[*]}" "$lmed"
  else
    printf "%-34s median %5d ms  (hits %s; %s); local %d ms\n" "$name" "$med" "$n" "${ts[*]}" "$lmed"
  fi
}
q "literal 'filter is'" --literal "filter is"
q "literal 'src/components'" --literal "src/components"
q "literal 'read fles' (a prefix)" --literal "read fles"
q "literal 'quigrichu' (in a word)" --literal "quigrichu"
q "literal 'unwrap()' (a word's end)" --literal "unwrap()"
q "regex 'filter \\w+ value'" 're:filter \w+ value'
q "regex 'fil+ter' (no run)" 're:fil+ter'
q "prefix 'fil*'" "fil*"
q "OR 'filter OR value'" "filter OR value"
q "NOT 'the -filter'" "the -filter"
q "word 'filter'" "filter"
q "phrase 'read the'" '"read the"'
if [ "${LIMITED:-0}" = 1 ]; then
  HOME=$W "${L[@]}" team add-member lim --reads one \
    --admin "postgresql:///pidx?host=$PG_TMP&port=$PG_PORT&user=postgres" >/dev/null
  URL="postgresql:///pidx?host=$PG_TMP&port=$PG_PORT&user=lim"
  echo "-- as a reader limited to the source (--reads one)"
  q "limited: word 'filter'" "filter"
  q "limited: literal 'filter is'" --literal "filter is"
  q "limited: OR 'filter OR value'" "filter OR value"
  q "limited: prefix 'fil*'" "fil*"
  q "limited: literal 'quigrichu'" --literal "quigrichu"
fi
