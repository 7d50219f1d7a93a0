#!/usr/bin/env bash
# The server's ranking against the local one on published transcripts (issue 52): the corpus of
# the real meaning evaluation (tests/meaning/real: 862 pi/OpenClaw session files from 9 public
# repositories, rebuilt from their snapshots by corpus.py; nothing of it is committed), its
# folders split in two sources pushed to a throwaway PostgreSQL, and one local index over all
# of it. benches/pg_rank_real.py draws 300 queries a seed from the corpus's words (245 words,
# phrases and filters; 55 prefixes, ORs, NOTs, literals and patterns) and compares every top
# 20, scores included. Push redacts by default: a word inside a secret is on the
# local index and not on the server, by design; PIDX_BENCH_NO_REDACT=1 pushes with --no-redact.
#
#   bash benches/pg_rank_real.sh            # seeds 11, 13 and 14
#   bash benches/pg_rank_real.sh 5 6        # other seeds
#   PIDX_BIN=/path/to/pidx bash benches/pg_rank_real.sh   # another build (pushes and reads)
#
# Without the snapshots (the `fetch` tool, /work/.mirror or $PIDX_MIRRORS) it says SKIPPED.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=("$@")
[[ ${#seeds[@]} -gt 0 ]] || seeds=(11 13 14)
W=$(mktemp -d /tmp/pidx-pg-rank-real.XXXXXX)
if ! python3 tests/meaning/real/corpus.py tests/meaning/real/manifest.tsv "${PIDX_MIRRORS:-/work/.mirror}" "$W/corpus" 2>/dev/null; then
  echo "SKIPPED benches/pg_rank_real.sh: the corpus's repositories are not all fetched (tests/meaning/real/manifest.tsv)"
  rm -rf "$W"
  exit 0
fi
if [[ -z "${PIDX_BIN:-}" ]]; then
  cargo build --release --bin pidx >/dev/null 2>&1
fi
P=${PIDX_BIN:-${CARGO_TARGET_DIR:-target}/release/pidx}
pg_skip() { echo "benches/pg_rank_real.sh: no PostgreSQL server: $*" >&2; exit 1; }
PG_TMP_PREFIX=/tmp/pidx-pg-rank-real-server
source tests/pg/server.sh
pg_start
trap 'pg_stop; rm -rf "$W"' EXIT
URL="postgresql:///pidx?host=$PG_TMP&port=$PG_PORT&user=pidx_writer"
export HOME="$W/home" PIDX_CONFIG="$W/no-config.toml"
mkdir -p "$W/home" "$W/all/sessions" "$W/a/sessions" "$W/b/sessions"
n=0
for d in $(ls "$W/corpus" | sort); do
  cp -a "$W/corpus/$d" "$W/all/sessions/"
  if (( n % 2 )); then cp -a "$W/corpus/$d" "$W/b/sessions/"; else cp -a "$W/corpus/$d" "$W/a/sessions/"; fi
  n=$((n + 1))
done
for h in all a b; do
  "$P" --db "$W/$h/index.db" --root "$W/$h/sessions" sync >/dev/null 2>&1
done
echo "corpus: $(find "$W/all/sessions" -name '*.jsonl' | wc -l) session files, $(du -sm "$W/all/sessions" | cut -f1) MiB; $n folders in two sources; $("$P" --version)"
for h in a b; do
  "$P" --db "$W/$h/index.db" --root "$W/$h/sessions" --no-sync push --pg "$URL" --source "real-$h" ${PIDX_BENCH_NO_REDACT:+--no-redact}
done
for s in "${seeds[@]}"; do
  python3 benches/pg_rank_real.py "$P" "$W/all/index.db" "$W/all/sessions" "$W/a/index.db" "$W/a/sessions" "$URL" "$s"
done
