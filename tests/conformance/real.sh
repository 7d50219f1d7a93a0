#!/usr/bin/env bash
# pidx against pi on transcripts nobody wrote for pidx: the 862 published pi/OpenClaw session
# files of the real meaning evaluation (tests/meaning/real/manifest.tsv, rebuilt from the
# snapshots of their repositories; nothing of them is committed), one folder (repository) at a
# time: pi's answers (pi-answers.mjs, at most $PIDX_ORACLE_LEAVES contexts a session, 6 by
# default: every entry's context of a long session is quadratic), then the conformance tests
# (list, list by cwd, open, the contexts, the trees) with PIDX_CONFORMANCE_DIR on them. pi's
# picker is not recorded here. Says SKIPPED and exits 0 without the snapshots or without node.
#
#   bash tests/conformance/real.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
mirrors="${PIDX_MIRRORS:-/work/.mirror}"
work="${TMPDIR:-/tmp}/pidx-conformance-real"
rm -rf "$work" && mkdir -p "$work"
if ! python3 tests/meaning/real/corpus.py tests/meaning/real/manifest.tsv "$mirrors" "$work/corpus" 2>/dev/null; then
  echo "SKIPPED tests/conformance/real.sh: the corpus's repositories are not all in $mirrors (tests/meaning/real/manifest.tsv)"
  exit 0
fi
if ! sm="$(bash tests/conformance/setup-pi.sh 2>/dev/null | tail -1)" || [[ ! -f "$sm" ]]; then
  echo "SKIPPED tests/conformance/real.sh: pi could not be installed (node and npm are needed)"
  exit 0
fi
cargo build --release --quiet --test it
failed=0
# A repository with at least 20 files is a run of its own; the smaller ones run together (the
# listing test wants more than ten sessions).
small=()
chunks=()
for folder in $(ls "$work/corpus" | sort); do
  if (( $(ls "$work/corpus/$folder" | wc -l) >= 20 )); then chunks+=("$folder"); else small+=("$folder"); fi
done
[[ ${#small[@]} -eq 0 ]] || chunks+=("${small[*]}")
for chunk in "${chunks[@]}"; do
  name=${chunk%% *}
  c="$work/run-$name"
  mkdir -p "$c/sessions"
  for folder in $chunk; do cp -a "$work/corpus/$folder" "$c/sessions/"; done
  (cd "$c" && python3 -c '
import json, os
m = {}
for root, _, files in os.walk("sessions"):
    for f in files:
        p = os.path.join(root, f)
        m[os.path.relpath(p, "sessions")] = int(os.stat(p).st_mtime * 1000)
json.dump(m, open("mtimes.json", "w"))')
  PIDX_PI_SM="$sm" PIDX_ORACLE_LEAVES="${PIDX_ORACLE_LEAVES:-6}" node --max-old-space-size=6000 \
    tests/conformance/pi-answers.mjs "$c" "$c/golden" >"$c/answers.log" 2>&1
  # A linear session nests one tree level per entry: the comparison of a 3,164-deep tree needs
  # more than a test thread's default stack.
  if RUST_MIN_STACK=1000000000 PIDX_CONFORMANCE_DIR="$c" cargo test --release --quiet --test it -- \
      conformance:: --skip list_query_matches_pis_picker --nocapture >"$c/test.log" 2>&1; then
    echo "$chunk: $(grep -ho 'conformance checked: .*' "$c/test.log" | sed 's/conformance checked: //' | tr '\n' ' ')"
  else
    failed=1
    echo "$chunk: FAILED (see $c/test.log)"
    grep -A20 'mismatches with pi\|panicked' "$c/test.log" | head -40 || true
  fi
done
exit $failed
