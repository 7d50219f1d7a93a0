#!/usr/bin/env bash
# Install pi's package from npm and print the absolute path of its
# dist/core/session-manager.js. Its SessionManager is the conformance oracle
# (live.sh, regenerate.sh, generated.sh); benches/ and tests/openclaw/ use it too;
# tests/pi-package/run.sh also runs pi's CLI from the same install
# (dist/bundle/cli.js), for this version and for the newest release that
# installs, each in a prefix of its own.
#
#   PIDX_PI_DIR      install prefix (default: <repo>/.oracle, git-ignored)
#   PIDX_PI_VERSION  package version (default: 0.87.1, the release the committed
#                    goldens were recorded with; tests/pi-package/run.sh reads
#                    this default from the `version=` line below, keep its form)
#
# Idempotent: nothing is downloaded when that version is already installed.
# All npm chatter goes to stderr; stdout is only the path.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
pkg="@earendil-works/pi-coding-agent"
version="${PIDX_PI_VERSION:-0.87.1}"
prefix="${PIDX_PI_DIR:-$repo/.oracle}"

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "setup-pi.sh: '$tool' not found on PATH; the pi oracle needs Node.js (>= 20) and npm" >&2
    exit 127
  fi
done

mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
pkgdir="$prefix/node_modules/$pkg"
sm="$pkgdir/dist/core/session-manager.js"

installed=""
if [ -f "$pkgdir/package.json" ]; then
  installed="$(node -e 'process.stdout.write(String(require(process.argv[1]).version))' "$pkgdir/package.json" 2>/dev/null || true)"
fi

if [ "$installed" != "$version" ] || [ ! -f "$sm" ]; then
  echo "setup-pi.sh: installing $pkg@$version into $prefix" >&2
  # A package.json keeps npm from walking up to the repo or $HOME.
  [ -f "$prefix/package.json" ] || echo '{"private":true,"name":"pidx-pi-oracle"}' >"$prefix/package.json"
  npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
    "$pkg@$version" >&2
fi

if [ ! -f "$sm" ]; then
  echo "setup-pi.sh: install finished but $sm is missing" >&2
  exit 1
fi
echo "$sm"
