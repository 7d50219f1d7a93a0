#!/usr/bin/env bash
# The benchmark, in one command: builds pidx and the examples (release), generates a seeded
# corpus with gen_corpus unless it exists, installs pi's package when node is present (for the
# pi rows), then runs examples/bench.rs and writes its markdown table to OUT/bench.md.
#
#   benches/run.sh [--out DIR] [--sessions N] [--bytes SIZE] [--huge-session SIZE]
#                  [--seed S] [--runs N] [--pi-runs N] [--watch-appends N] [--watch-idle SECS]
#                  [--huge-line-mb N] [--no-pi] [--queries-only]
#   benches/run.sh --scaling N:SIZE,N:SIZE,... [--out DIR] [--seed S] [--runs N] [--pi-runs N]
#                  [--row-budget SECS] [--pi-max N] [--clean]
#
# Defaults give docs/performance.md's corpus: 10,000 sessions, 2 GB, plus one 1 GB session.
# --queries-only reruns the list, search and stats rows on the index an earlier run left in OUT/work.
# --scaling runs the compact rows (bench --compact) on one corpus per size, N sessions of SIZE in
# all (no huge session), in OUT/N/{sessions,work}, saves each size's rows in OUT/N/rows.json and
# writes the side-by-side table of every size in the list that has rows to OUT/scaling.md.
# The pi rows run only up to --pi-max sessions (default 10000); --clean deletes each size's
# corpus and index once its rows are saved. Default OUT for --scaling: /tmp/pidx-scaling.
set -euo pipefail
cd "$(dirname "$0")/.."

out=/tmp/pidx-bench
sessions=10000
bytes=2G
huge=1G
seed=1
bench_args=()
scaling=""
pi_max=10000
clean=0
out_given=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; out_given=1; shift 2 ;;
    --scaling) scaling="$2"; shift 2 ;;
    --pi-max) pi_max="$2"; shift 2 ;;
    --clean) clean=1; shift ;;
    --sessions) sessions="$2"; shift 2 ;;
    --bytes) bytes="$2"; shift 2 ;;
    --huge-session) huge="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --runs|--pi-runs|--row-budget|--watch-appends|--watch-idle|--huge-line-mb) bench_args+=("$1" "$2"); shift 2 ;;
    --no-pi|--queries-only) bench_args+=("$1"); shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

cargo build --release --bin pidx --example gen_corpus --example bench
tdir="${CARGO_TARGET_DIR:-target}"
if [ -n "$scaling" ]; then
  [ "$out_given" = 1 ] || out=/tmp/pidx-scaling
  source benches/scaling.sh
  exit 0
fi
corpus="$out/sessions"
if [ ! -d "$corpus" ]; then
  echo "run.sh: generating $sessions sessions ($bytes + one $huge session) into $corpus" >&2
  mkdir -p "$out"
  "$tdir"/release/examples/gen_corpus --out "$corpus" --sessions "$sessions" --bytes "$bytes" \
    --huge-session "$huge" --seed "$seed"
else
  echo "run.sh: reusing the corpus in $corpus (delete it to regenerate)" >&2
fi
if [[ " ${bench_args[*]-} " != *" --no-pi "* ]]; then
  if command -v node >/dev/null && command -v npm >/dev/null; then
    tests/conformance/setup-pi.sh >/dev/null || echo "run.sh: pi's package did not install; pi rows will be skipped" >&2
  else
    echo "run.sh: node/npm missing: the pi rows will be skipped" >&2
  fi
fi
command -v rg >/dev/null || echo "run.sh: rg missing (apt-get install ripgrep): the rg rows will be skipped" >&2
[ -x /usr/bin/time ] || echo "run.sh: /usr/bin/time missing (apt-get install time): no peak RSS" >&2

mkdir -p "$out/work"
{
  echo "Machine: $(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), $(date -u +%Y-%m-%d)"
  echo
  "$tdir"/release/examples/bench --pidx "$tdir/release/pidx" --corpus "$corpus" --work "$out/work" ${bench_args[@]+"${bench_args[@]}"}
} | tee "$out/bench.md"
echo "run.sh: table written to $out/bench.md" >&2
