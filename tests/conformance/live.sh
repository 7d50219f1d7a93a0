#!/usr/bin/env bash
# Live conformance run against pi itself: install pi (setup-pi.sh), generate a FRESH corpus
# with a random seed in a temp dir, record pi's answers there, and run the Rust conformance
# test on it:
#   PIDX_CONFORMANCE_DIR=<tmp> cargo test --release --test it -- conformance:: --nocapture
# Without node/npm this prints a loud SKIPPED line and exits 0.
#   PIDX_LIVE_SEED=S   reuse a seed (printed on every run)
#   PIDX_LIVE_KEEP=1   keep the temp dir even when the test passes
#   extra arguments go to make-corpus.mjs (e.g. --sessions 200)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "=================================================================="
    echo "SKIPPED: pi live conformance: '$tool' is not installed (needs Node.js >= 20 and npm)"
    echo "=================================================================="
    exit 0
  fi
done

PIDX_PI_SM="$("$here/setup-pi.sh")"
export PIDX_PI_SM

seed="${PIDX_LIVE_SEED:-$(( (RANDOM << 15) | RANDOM ))}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/pidx-live-XXXXXX")"
echo "live.sh: seed $seed, corpus in $tmp" >&2
node "$here/make-corpus.mjs" "$tmp" --seed "$seed" "$@"
node "$here/pi-answers.mjs" "$tmp" "$tmp/golden"
node "$here/pi-picker.mjs" "$tmp" "$tmp/golden/picker.json"

cd "$repo"
status=0
PIDX_CONFORMANCE_DIR="$tmp" cargo test --release --test it -- conformance:: --nocapture || status=$?
if [ "$status" -eq 0 ] && [ -z "${PIDX_LIVE_KEEP:-}" ]; then
  rm -rf "$tmp"
else
  echo "live.sh: corpus kept in $tmp (reproduce with PIDX_LIVE_SEED=$seed)" >&2
fi
exit "$status"
