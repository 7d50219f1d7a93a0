#!/usr/bin/env bash
# A short run of every fuzz target (docs/fuzzing.md), for .ci/run (its time there:
# docs/fuzzing.md, "Time in .ci/run"). Needs a nightly toolchain and cargo-fuzz; installs
# cargo-fuzz when missing and skips LOUDLY when it cannot. Each target first replays its kept
# inputs (tests/fixtures/fuzz/<target>: the inputs that found bugs) and seeds, then fuzzes
# for PIDX_FUZZ_SECONDS (default 20) seconds. A crash fails the run and leaves its input in
# tests/fuzz/artifacts/<target>/.
#
#   bash tests/fuzz/run.sh [TARGET...]     PIDX_FUZZ_SECONDS=600 for a longer campaign
#   PIDX_FUZZ_FLAGS="--dev -s none" PIDX_FUZZ_SECONDS=15 bash tests/fuzz/run.sh   # what .ci/run does
set -euo pipefail
cd "$(dirname "$0")"
seconds="${PIDX_FUZZ_SECONDS:-20}"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(line context openclaw search markdown postings)
fi

skip() {
  echo "SKIPPED: fuzz targets not run: $*"
  exit 0
}

command -v rustup >/dev/null || skip "no rustup to find a nightly toolchain"
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  rustup toolchain install nightly --profile minimal >/dev/null 2>&1 ||
    skip "no nightly toolchain and rustup cannot install one"
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "installing cargo-fuzz from crates.io"
  cargo +nightly install cargo-fuzz --locked >/dev/null 2>&1 ||
    skip "cargo-fuzz is missing and cannot be installed (crates.io unreachable?)"
fi

# The targets that build an index per input write it to a temporary directory: on a tmpfs
# they ran 1.7x faster here (the `context` corpus replayed in 17 s against 29 s on disk).
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
  export TMPDIR=/dev/shm
fi

# PIDX_FUZZ_FLAGS: the build, `-O` by default (release with debug assertions, the address
# sanitizer). .ci/run passes `--dev -s none` (no optimisation, no sanitizer: minutes to build
# cold where the sanitizer build took over an hour; the coverage that guides libFuzzer is the
# same).
read -r -a flags <<<"${PIDX_FUZZ_FLAGS:--O}"
start=$(date +%s)
cargo +nightly fuzz build --fuzz-dir . "${flags[@]}"
echo "fuzz targets built in $(($(date +%s) - start)) s"
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  kept=()
  [ -d "../fixtures/fuzz/$t" ] && kept=("../fixtures/fuzz/$t")
  echo "== fuzz $t for ${seconds}s"
  log="artifacts/$t/last-run.log"
  status=0
  cargo +nightly fuzz run --fuzz-dir . "${flags[@]}" "$t" "corpus/$t" "seeds/$t" "${kept[@]}" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    >"$log" 2>&1 || status=$?
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)' "$log" || true
  if [ "$status" -ne 0 ]; then
    tail -40 "$log"
    echo "FAILED: fuzz target $t crashed; its input is in tests/fuzz/artifacts/$t/"
    exit 1
  fi
done
echo "fuzz targets: ${#targets[@]} run, $(($(date +%s) - start)) s in all"
