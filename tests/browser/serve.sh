#!/usr/bin/env bash
# `pidx serve` in a real browser. Writes fixture sessions (tests/browser/serve_corpus.py: a
# branched session with every kind of message, a 601-message session, hostile sessions and a
# 50 MB line), starts the server, and drives headless Chromium through the DevTools protocol
# (tests/browser/cdp.py, over --remote-debugging-pipe) in tests/browser/serve_test.py: every page
# loads with no console error, filter and search as you type, a hit opens at its entry, the tree
# opens a leaf's context, a long session pages as it scrolls, an appended line shows up live,
# a conversation as it was (a person's text as typed, Markdown for the assistant, the system
# prompt, thinking and tool calls folded to one line with their results inside), the lists'
# figures, filters, order, two panes and keys, dark mode, the tree's rails and folding, the
# usage range equal to `pidx stats`'s, exports that open offline with no planted secret, no page
# overflows 400, 1000 or 1600 px, no payload runs (window.PWNED stays unset), the CSP header is
# present, and the access rules hold (token off loopback, wrong token 401, foreign Host refused).
# Installs Debian's chromium when it can (root + apt-get); otherwise prints SKIPPED.
#   PIDX_KEEP_SERVE=DIR  keep the screenshots in DIR
#   PIDX_BIG_LINE_MB=N   the very large line's size (default 50)
set -euo pipefail
cd "$(dirname "$0")/../.."

browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser="$(command -v "$b")"; break; fi
done
if [ -z "$browser" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "serve.sh: installing chromium (Debian package)" >&2
  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; } >/tmp/pidx-chromium-install.log 2>&1 || true
  command -v chromium >/dev/null 2>&1 && browser="$(command -v chromium)"
fi
if [ -z "$browser" ]; then
  echo "=================================================================="
  echo "SKIPPED: pidx serve browser test: no chromium (install Debian's 'chromium' package)"
  echo "=================================================================="
  exit 0
fi

cargo build --quiet
pidx="${CARGO_TARGET_DIR:-$PWD/target}/debug/pidx"
work="$(mktemp -d)"
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
python3 tests/browser/serve_corpus.py "$work/sessions" "${PIDX_BIG_LINE_MB:-50}"
# HOME too, so nothing reads the real ~/.pi.
HOME="$work" python3 tests/browser/serve_test.py "$pidx" "$browser" "$work"
echo "serve.sh: all browser checks passed"
