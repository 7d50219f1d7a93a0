#!/usr/bin/env bash
# Live check against OpenClaw itself (.ci/run calls it): installs Node 24, openclaw and pi
# (setup.sh, cached in ~/.cache/pidx-test), has OpenClaw's own code write a fresh gateway
# state folder (make-store.mjs), pi answer on its transcripts (pi-answers.mjs) and OpenClaw
# itself through its own reading functions (oc-answers.mjs), runs the
# Rust OpenClaw tests on it, then live-checks.mjs: pidx while OpenClaw appends, rewrites,
# deletes and writes concurrently. Prints `SKIPPED: reason` and exits 0 when the packages
# cannot be installed here.
#   PIDX_OC_KEEP=1   keep the work folder even when everything passes
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

set +e
env_lines="$("$here/setup.sh")"
status=$?
set -e
if [ "$status" -eq 3 ]; then
  echo "=================================================================="
  echo "SKIPPED: OpenClaw live check (see the SKIPPED line above)"
  echo "=================================================================="
  exit 0
elif [ "$status" -ne 0 ]; then
  exit "$status"
fi
eval "$env_lines"

work="$(mktemp -d "${TMPDIR:-/tmp}/pidx-oc-live-XXXXXX")"
echo "live.sh: OpenClaw state in $work" >&2
quiet() { grep -v -e 'slow SQLite' -e 'slow session lifecycle' >&2 || true; }
"$PIDX_OC_NODE" --no-warnings "$here/make-store.mjs" "$work/state" 2> >(quiet)
"$PIDX_OC_NODE" --no-warnings "$here/pi-answers.mjs" "$work/state" "$work/pi-answers.json" 2> >(quiet)
"$PIDX_OC_NODE" --no-warnings "$here/oc-answers.mjs" "$work/state" "$work/oc-answers.json" 2> >(quiet)
cp "$work/state/manifest.json" "$work/manifest.json"

cd "$repo"
status=0
PIDX_OPENCLAW_DIR="$work" cargo test --test it -- openclaw:: openclaw_cli:: openclaw_watch:: || status=$?
if [ "$status" -eq 0 ]; then
  cargo build --quiet
  bin="${CARGO_TARGET_DIR:-$repo/target}/debug/pidx"
  "$PIDX_OC_NODE" --no-warnings "$here/live-checks.mjs" "$work" "$bin" 2> >(quiet) || status=$?
fi
if [ "$status" -eq 0 ] && [ -z "${PIDX_OC_KEEP:-}" ]; then
  rm -rf "$work"
else
  echo "live.sh: work folder kept in $work" >&2
fi
exit "$status"
