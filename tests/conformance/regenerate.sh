#!/usr/bin/env bash
# Regenerate the committed conformance corpus and pi's answers for it:
#   tests/fixtures/conformance/sessions/     (corpus; replaced)
#   tests/fixtures/conformance/mtimes.json   (file mtimes; git does not keep them)
#   tests/fixtures/conformance/golden/       (pi's answers; replaced)
# Deterministic: running it twice gives identical files. Extra arguments go to
# make-corpus.mjs (e.g. --seed S, --sessions N).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
fix="$repo/tests/fixtures/conformance"

PIDX_PI_SM="$("$here/setup-pi.sh")"
export PIDX_PI_SM

mkdir -p "$fix"
rm -rf "$fix/golden"
node "$here/make-corpus.mjs" "$fix" "$@"
node "$here/pi-answers.mjs" "$fix" "$fix/golden"
node "$here/pi-picker.mjs" "$fix" "$fix/golden/picker.json"
# git must keep CRLF, BOM and invalid UTF-8 bytes exactly as written
printf '* -text\n' >"$fix/.gitattributes"
echo "regenerate.sh: corpus and goldens written to $fix" >&2
