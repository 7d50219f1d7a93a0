#!/usr/bin/env bash
# The file-history benchmark (issue 34, docs/files.md), in one command: builds pidx and the
# examples (release), generates a seeded corpus with gen_corpus unless OUT/sessions exists,
# indexes it with and without file touches (PIDX_BENCH_NO_TOUCHES=1, alternating, --runs each;
# the least CPU time of each counts) and reports ingest time and index size, then runs
# examples/bench_files.rs (attribution precision/recall on a replayed git history, blame and
# commits timings, `files PATH` on the corpus index). Markdown on stdout and in OUT/files.md.
#
#   benches/files.sh [--out DIR] [--sessions N] [--bytes SIZE] [--seed S] [--runs N]
#                    [--events N] [--commit-every K]
#
# Defaults: 1,000 sessions of 256 MB (the 10,000-session, 2 GB corpus of benches/run.sh is
# `--sessions 10000 --bytes 2G`: about 6 minutes a sync on this machine), 3,000 events
# committed every 3 (about 1,000 commits).
set -euo pipefail
cd "$(dirname "$0")/.."

out=/tmp/pidx-files-bench
sessions=1000
bytes=256M
seed=1
runs=2
events=3000
every=3
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --sessions) sessions="$2"; shift 2 ;;
    --bytes) bytes="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --events) events="$2"; shift 2 ;;
    --commit-every) every="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "files.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

cargo build --release --bin pidx --example gen_corpus --example bench_files
tdir="${CARGO_TARGET_DIR:-target}"
pidx="$tdir/release/pidx"
corpus="$out/sessions"
mkdir -p "$out"
if [ ! -d "$corpus" ]; then
  echo "files.sh: generating $sessions sessions ($bytes) into $corpus" >&2
  "$tdir"/release/examples/gen_corpus --out "$corpus" --sessions "$sessions" --bytes "$bytes" \
    --seed "$seed" >&2
fi

# One full sync into a new index; prints its CPU seconds (user + system: on a shared machine
# the wall time measures the neighbours too) and the index's bytes.
sync_once() {
  local db="$1" off="$2"
  rm -f "$db" "$db-wal" "$db-shm"
  local cpu
  PIDX_BENCH_NO_TOUCHES="$off" /usr/bin/time -o "$out/time.txt" -f "%U %S" \
    "$pidx" --db "$db" --root "$corpus" sync >/dev/null 2>&1
  cpu=$(tail -1 "$out/time.txt" | awk '{print $1 + $2}')
  # The last connection to close checkpoints and removes the WAL: the file is the index.
  echo "$cpu $(( $(stat -c %s "$db") + $(stat -c %s "$db-wal" 2>/dev/null || echo 0) ))"
}

best_with=""; best_without=""
for i in $(seq "$runs"); do
  read -r t s < <(sync_once "$out/without.db" 1); size_without=$s
  if [ -z "$best_without" ] || (( $(echo "$t < $best_without" | bc) )); then best_without=$t; fi
  read -r t s < <(sync_once "$out/with.db" 0); size_with=$s
  if [ -z "$best_with" ] || (( $(echo "$t < $best_with" | bc) )); then best_with=$t; fi
  echo "files.sh: run $i: without touches ${best_without}s, with ${best_with}s (best so far)" >&2
done
touches=$("$pidx" --db "$out/with.db" --root "$corpus" --no-sync sql "SELECT count(*) AS n FROM touches" --csv | tail -1)
corpus_bytes=$(du -sb "$corpus" | cut -f1)

{
  echo "## Ingest cost of file touches ($sessions sessions, $(echo "scale=1; $corpus_bytes / 1048576" | bc) MB, seed $seed, best of $runs alternating runs)"
  echo
  echo "| measure | without touches | with touches | change |"
  echo "|---|---|---|---|"
  echo "| full sync, CPU seconds (user + system) | ${best_without} s | ${best_with} s | $(echo "scale=1; 100 * ($best_with - $best_without) / $best_without" | bc)% |"
  echo "| index size | $(echo "scale=1; $size_without / 1048576" | bc) MB | $(echo "scale=1; $size_with / 1048576" | bc) MB | $(echo "scale=1; 100 * ($size_with - $size_without) / $size_without" | bc)% |"
  echo "| touches recorded | | $touches | |"
  echo
  "$tdir"/release/examples/bench_files --out "$out/replay" --events "$events" \
    --commit-every "$every" --seed "$seed" --corpus-db "$out/with.db"
} | tee "$out/files.md"
