#!/usr/bin/env bash
# Starts `pidx watch` N times (default 200) while two loops run `pidx status` on the same index,
# and counts watchers that exit instead of starting. Before the lock fix (af8b85f) a status poll
# could hold the writer lock at the instant a watcher took it (~1 in 100 refused).
#   usage: tests/lock-race.sh [N] [PIDX_BINARY]   (default binary: target/debug/pidx)
set -uo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
pidx=${2:-target/debug/pidx}
[ -x "$pidx" ] || cargo build -q
d=$(mktemp -d)
trap 'touch "$d/stop"; wait; rm -rf "$d"' EXIT
mkdir -p "$d/s/--p--"
printf '%s\n' '{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}' >"$d/s/--p--/a.jsonl"
run() { "$pidx" --root "$d/s" --db "$d/i.db" "$@"; }
run sync >/dev/null 2>&1
for _ in 1 2; do
  ( while [ ! -e "$d/stop" ]; do run status >/dev/null 2>&1; done ) &
done
refused=0
for _ in $(seq "$n"); do
  "$pidx" --root "$d/s" --db "$d/i.db" watch 2>"$d/err" &
  w=$!
  sleep 0.3
  if kill -0 "$w" 2>/dev/null; then
    kill "$w"; wait "$w" 2>/dev/null
  else
    refused=$((refused + 1)); head -1 "$d/err"
  fi
done
echo "watchers refused: $refused of $n"
[ "$refused" -eq 0 ]
