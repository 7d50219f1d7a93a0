#!/usr/bin/env bash
# The release artifacts, end to end, as a user without Rust gets them:
#
#   bash tests/packaging/run.sh OUT
#
# builds them with `bash packaging/build.sh OUT` (OUT is kept: tests/pi-package/run.sh installs
# the packed pi package from it), then checks: the archive's checksum verifies, its files are
# there, its binary prints the version and this commit and is at most 25 MB; the npm tarballs
# install with `npm install -g --offline --prefix EMPTY` with no cargo on PATH and a fresh
# HOME, and the installed `pidx` answers on the sample corpus (tests/fixtures/conformance/
# sessions) exactly as the archive's binary does, exit codes included; the launcher's one-line
# errors on a platform without a prebuilt binary, a musl Linux and a missing platform package;
# the README's Install section, run from these artifacts (tests/it/readme.rs, install_*).
#
# Budget: .ci/run runs it right after tests/meaning/model.sh's release build, so build.sh's
# build is fresh and packs; the README install test then makes the release test build that the
# conformance checks reuse later (.ci/run says why the order matters).
# Without node or npm it prints a loud SKIPPED line and exits 0.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
if [ $# -ne 1 ]; then
  echo "usage: bash tests/packaging/run.sh OUT" >&2
  exit 2
fi
for tool in node npm tar gzip sha256sum; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIPPED: the release artifacts check: '$tool' is not installed"
    exit 0
  fi
done
mkdir -p "$1"
out="$(cd "$1" && pwd)"
started=$SECONDS
failures=0
ok() { echo "ok    $*"; }
fail() {
  echo "FAIL  $*"
  failures=$((failures + 1))
}

bash "$repo/packaging/build.sh" "$out"
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' "$repo/Cargo.toml")"
target="$(rustc -vV | sed -n 's/^host: //p')"
name="pidx-$version-$target"
commit="$(git -C "$repo" rev-parse --short=12 HEAD)"
echo "built in $((SECONDS - started)) s"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/pidx-packaging-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# The archive.
if (cd "$out" && sha256sum --quiet -c "$name.tar.gz.sha256"); then
  ok "the archive's checksum verifies (sha256sum -c $name.tar.gz.sha256)"
else
  fail "the archive's checksum does not verify"
fi
cp "$out/$name.tar.gz" "$tmp/tampered.tar.gz"
printf 'x' >>"$tmp/tampered.tar.gz"
sed "s/$name.tar.gz/tampered.tar.gz/" "$out/$name.tar.gz.sha256" >"$tmp/tampered.sha256"
if (cd "$tmp" && ! sha256sum --quiet -c tampered.sha256 2>/dev/null); then
  ok "and a changed archive does not"
else
  fail "a changed archive still verifies"
fi
tar -xzf "$out/$name.tar.gz" -C "$tmp"
listed="$(cd "$tmp/$name" && ls | tr '\n' ' ')"
if [ "$listed" = "CHANGELOG.md LICENSE README.md THIRD-PARTY-LICENSES.txt pidx " ]; then
  ok "the archive holds the binary, LICENSE, THIRD-PARTY-LICENSES.txt, README.md, CHANGELOG.md"
else
  fail "the archive holds: $listed"
fi
printed="$("$tmp/$name/pidx" --version)"
if [ "$printed" = "pidx $version (commit $commit, $(git -C "$repo" log -1 --format=%cs))" ]; then
  ok "pidx --version names the version and the commit: $printed"
else
  fail "pidx --version printed '$printed' (commit $commit)"
fi
size="$(wc -c <"$tmp/$name/pidx")"
if [ "$size" -le $((25 * 1024 * 1024)) ]; then
  ok "the binary is $size bytes ($((size / 1024 / 1024)) MiB; at most 25 MiB)"
else
  fail "the binary is $size bytes, over 25 MiB"
fi
crates="$(grep -c '^[a-z0-9_-]* [0-9][^ ]*  ' "$tmp/$name/THIRD-PARTY-LICENSES.txt" || true)"
if grep -q '^rusqlite ' "$tmp/$name/THIRD-PARTY-LICENSES.txt" && grep -q '^libgit2-sys [^ ]*: libgit2/COPYING' "$tmp/$name/THIRD-PARTY-LICENSES.txt"; then
  ok "THIRD-PARTY-LICENSES.txt lists $crates crates with their licence texts (and bundled C code's, e.g. libgit2/COPYING)"
else
  fail "THIRD-PARTY-LICENSES.txt misses rusqlite or libgit2's COPYING"
fi

# npm, as a user without Rust: a fresh HOME (so an empty npm cache), no cargo on PATH.
clean_path=""
for d in "$(dirname "$(command -v node)")" "$(dirname "$(command -v npm)")" /usr/local/bin /usr/bin /bin; do
  [ -x "$d/cargo" ] || [ -x "$d/pidx" ] || [ -x "$d/rustc" ] && continue
  case ":$clean_path:" in *":$d:"*) continue ;; esac
  clean_path="${clean_path:+$clean_path:}$d"
done
prefix="$tmp/empty-prefix"
mkdir -p "$prefix" "$tmp/home"
user() {
  env -i HOME="$tmp/home" PATH="$prefix/bin:$clean_path" TMPDIR="${TMPDIR:-/tmp}" NO_COLOR=1 "$@"
}
if user sh -c 'command -v cargo || command -v rustc || command -v pidx' >/dev/null; then
  fail "the user's PATH still finds cargo, rustc or pidx: $clean_path"
fi
t0=$SECONDS
if user npm install -g --offline --no-audit --no-fund --loglevel=error --prefix "$prefix" \
  "$out/pidx-$version.tgz" "$out/pidx-linux-x64-$version.tgz" >"$tmp/npm.log" 2>&1; then
  ok "npm install -g --offline --prefix EMPTY of the two tarballs, no cargo on PATH, fresh HOME ($((SECONDS - t0)) s)"
else
  fail "npm install -g --offline failed: $(cat "$tmp/npm.log")"
fi
installed="$(user sh -c 'command -v pidx' || true)"
if [ "$installed" = "$prefix/bin/pidx" ]; then
  ok "npm put pidx on PATH ($installed)"
else
  fail "pidx is not on the user's PATH after the install: '$installed'"
fi
corpus="$repo/tests/fixtures/conformance/sessions"
# The same commands through the launcher and straight through the archive's binary: the same
# output and exit code, on a copy of the corpus each (pidx never writes sessions; copies keep
# the two indexes apart).
cp -rp "$corpus" "$tmp/corpus-npm"
cp -rp "$corpus" "$tmp/corpus-archive"
same=1
for args in "list --all --json" "search flamingo --json" "search zzz-no-such-word --json" "stats --json" "show no-such-session"; do
  # shellcheck disable=SC2086
  a_out="$(user pidx --root "$tmp/corpus-npm" --db "$tmp/npm.db" $args 2>"$tmp/a.err")" && a=0 || a=$?
  # shellcheck disable=SC2086
  b_out="$(user "$tmp/$name/pidx" --root "$tmp/corpus-archive" --db "$tmp/archive.db" $args 2>"$tmp/b.err")" && b=0 || b=$?
  a_out="${a_out//corpus-npm/corpus}"
  b_out="${b_out//corpus-archive/corpus}"
  if [ "$a" != "$b" ] || [ "$a_out" != "$b_out" ]; then
    same=0
    fail "pidx $args: the npm-installed pidx exited $a, the archive's $b, or their outputs differ"
  fi
done
sessions="$(user pidx --root "$tmp/corpus-npm" --db "$tmp/npm.db" list --all --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).length))')"
if [ "$same" = 1 ] && [ "$sessions" -gt 0 ]; then
  ok "the npm-installed pidx lists the sample corpus's $sessions sessions, searches and counts it as the archive's binary does (exit codes 0, 1 and 2 included)"
fi
if user pidx --version | grep -q "^pidx $version (commit $commit"; then
  ok "the npm-installed pidx --version names the commit"
else
  fail "the npm-installed pidx --version: $(user pidx --version 2>&1)"
fi

# The launcher's errors: one line naming the platform, exit 2, nothing else run.
launcher="$prefix/lib/node_modules/pidx/bin/pidx.js"
expect_error() {
  local what="$1" pattern="$2"
  shift 2
  local err code
  err="$(user "$@" node -r "$here/fake-platform.cjs" "$launcher" --version 2>&1 >/dev/null)" && code=0 || code=$?
  if [ "$code" = 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && printf '%s' "$err" | grep -Eq "$pattern"; then
    ok "$what: $err"
  else
    fail "$what: exit $code, said: $err"
  fi
}
expect_error "a platform without a prebuilt binary is one line naming it" \
  '^pidx: no prebuilt pidx for this platform \(freebsd-x64\); prebuilt: linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64\. Build it from source' \
  env PIDX_FAKE_PLATFORM=freebsd-x64
expect_error "a musl Linux is one line naming it" \
  '^pidx: no prebuilt pidx for this platform \(linux-x64 with musl libc' \
  env PIDX_FAKE_LIBC=musl
expect_error "a known platform whose package npm did not install is one line naming the package" \
  '^pidx: the platform package @pidx/darwin-arm64 for darwin-arm64 is not installed' \
  env PIDX_FAKE_PLATFORM=darwin-arm64
code=0
user node -r "$here/fake-platform.cjs" "$launcher" --version >/dev/null 2>&1 || code=$?
if [ "$code" = 0 ]; then
  ok "the same launcher with the preload but no fake platform runs the binary"
else
  fail "the launcher with the preload alone exited $code"
fi
# A signal ends the launcher as it ended the binary.
code=0
user sh -c "pidx --root '$tmp/corpus-npm' --db '$tmp/npm.db' watch >/dev/null 2>&1 & p=\$!; sleep 2; kill -TERM \$p; wait \$p" || code=$?
watcher="$(user pidx --root "$tmp/corpus-npm" --db "$tmp/npm.db" status 2>&1 | grep '^watcher:' || true)"
if { [ "$code" = 0 ] || [ "$code" = 143 ]; } && [ "$watcher" = "watcher: none" ]; then
  ok "SIGTERM to the launcher stops the pidx watch it started (exit $code; status: $watcher)"
else
  fail "SIGTERM to the launcher: exit $code; status: $watcher"
fi

# The README's Install section, from these artifacts.
# The release test binary is the one tests/conformance/generated.sh built; PIDX_PROFILE=dev (a
# quick check of the packaging, see build.sh) uses the debug one.
profile=--release
[ "${PIDX_PROFILE:-release}" = dev ] && profile=--profile=dev
# cargo test passes when its filter matches nothing, and the test returns early with a SKIPPED
# line when it lacks the artifacts: the log must name the test that runs the commands as passed
# and say no SKIPPED (--nocapture shows it; in the passing run the test prints nothing).
readme_test=readme::install_from_the_readme_with_the_built_artifacts
if PIDX_RELEASE_OUT="$out" cargo test "$profile" --test it -- readme::install --nocapture >"$tmp/readme.log" 2>&1 \
  && grep -qx "test $readme_test ... ok" "$tmp/readme.log" && ! grep -q SKIPPED "$tmp/readme.log"; then
  ok "the README's Install section runs from these artifacts (cargo test $profile --test it -- readme::install: $(grep -o '[0-9]* passed' "$tmp/readme.log"))"
else
  fail "the README's Install section (no passing $readme_test, or a SKIPPED): $(tail -30 "$tmp/readme.log")"
fi

echo "tests/packaging: $failures failed, in $((SECONDS - started)) s"
[ "$failures" = 0 ]
