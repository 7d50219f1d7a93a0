#!/usr/bin/env bash
# Runs the live-index tests (watcher, faults, crashes, queue overflow, read-only index) N times
# in a row (default 20) and prints one line per run and a count: the flakiness check of the
# live index. Not part of .ci/run (it takes ~25 min on 2 cores); run it after touching the
# watcher or the writer path.   usage: tests/repeat-live.sh [N]
set -uo pipefail
cd "$(dirname "$0")/.."
n=${1:-20}
areas=(watch:: faults:: crash:: overflow:: read_only::)
cargo test --no-run --test it >/dev/null 2>&1 || { echo "build failed"; exit 2; }
log=$(mktemp -d)
pass=0
for i in $(seq "$n"); do
  start=$(date +%s)
  if cargo test --test it -- "${areas[@]}" >"$log/run-$i.log" 2>&1; then
    pass=$((pass + 1)); result=ok
  else
    result="FAILED (log: $log/run-$i.log)"
  fi
  echo "run $i/$n: $result in $(($(date +%s) - start)) s"
done
echo "$pass of $n runs passed"
[ "$pass" -eq "$n" ]
