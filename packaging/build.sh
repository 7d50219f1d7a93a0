#!/usr/bin/env bash
# Builds every release artifact of this platform into OUT:
#
#   bash packaging/build.sh OUT
#
#   OUT/pidx-VERSION-TARGET.tar.gz         the binary, LICENSE, THIRD-PARTY-LICENSES.txt,
#                                          README.md, CHANGELOG.md, in pidx-VERSION-TARGET/
#   OUT/pidx-VERSION-TARGET.tar.gz.sha256  its checksum (`sha256sum -c` format)
#   OUT/pidx-VERSION.tgz                   npm: the main package `pidx` (launcher, pi package)
#   OUT/pidx-PLATFORM-VERSION.tgz          npm: the platform package `@pidx/PLATFORM`
#
# TARGET is the host's Rust target unless PIDX_TARGET names another one (the release workflow,
# .github/workflows/release.yml, builds each platform on its own runner). The build is
# `cargo build --release --locked`: the dependencies are exactly Cargo.lock's. It uses the usual
# target folder (CARGO_TARGET_DIR or target/), so a release build CI already made is reused.
# Needs cargo, node and npm, tar and gzip. Publishing is a maintainer's step: docs/releasing.md.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: bash packaging/build.sh OUT" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
mkdir -p "$1"
out="$(cd "$1" && pwd)"
for tool in cargo node npm tar gzip; do
  command -v "$tool" >/dev/null 2>&1 || { echo "build.sh: '$tool' is not on PATH" >&2; exit 2; }
done
cd "$repo"

version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' Cargo.toml)"
[ -n "$version" ] || { echo "build.sh: no version in Cargo.toml's [workspace.package]" >&2; exit 2; }
host="$(rustc -vV | sed -n 's/^host: //p')"
target="${PIDX_TARGET:-$host}"
case "$target" in
  x86_64-unknown-linux-gnu) platform=linux-x64 os=linux cpu=x64 ;;
  aarch64-unknown-linux-gnu) platform=linux-arm64 os=linux cpu=arm64 ;;
  x86_64-apple-darwin) platform=darwin-x64 os=darwin cpu=x64 ;;
  aarch64-apple-darwin) platform=darwin-arm64 os=darwin cpu=arm64 ;;
  x86_64-pc-windows-msvc) platform=win32-x64 os=win32 cpu=x64 ;;
  *) echo "build.sh: no npm platform package for the Rust target $target" >&2; exit 2 ;;
esac
exe=pidx
[ "$os" = win32 ] && exe=pidx.exe

# PIDX_PROFILE=dev packs a debug build: a quick check of the packaging itself, never a release.
profile="${PIDX_PROFILE:-release}"
profile_dir="$profile"
[ "$profile" = dev ] && profile_dir=debug
echo "build.sh: cargo build --profile $profile --locked --bin pidx (target $target)" >&2
target_dir="${CARGO_TARGET_DIR:-$repo/target}"
if [ "$target" = "$host" ] && [ -z "${PIDX_TARGET:-}" ]; then
  cargo build --profile "$profile" --locked --quiet --bin pidx
  bin="$target_dir/$profile_dir/$exe"
else
  cargo build --profile "$profile" --locked --quiet --bin pidx --target "$target"
  bin="$target_dir/$target/$profile_dir/$exe"
fi

# The archive's file times are the commit's, so the same commit packs the same bytes. Set after
# the build: the C libraries' build scripts rerun when SOURCE_DATE_EPOCH changes (`cargo build
# -v`: "Dirty ring ...: the env variable SOURCE_DATE_EPOCH changed"), so exported before it
# rebuilt them and everything above them (233 s of .ci/run) where the release build was fresh.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"

stage="$(mktemp -d "${TMPDIR:-/tmp}/pidx-package-XXXXXX")"
trap 'rm -rf "$stage"' EXIT

node "$here/third-party-licenses.mjs" "$target" >"$stage/THIRD-PARTY-LICENSES.txt"

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1"; else shasum -a 256 "$1"; fi
}
# GNU tar can pack reproducibly (order, owners, times); bsdtar (macOS) packs as it can.
pack_tar() {
  local name="$1" dir="$2"
  if tar --version 2>/dev/null | grep -q 'GNU tar'; then
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
      -C "$stage" -cf - "$dir" | gzip -n -9 >"$out/$name"
  else
    tar -C "$stage" -cf - "$dir" | gzip -n -9 >"$out/$name"
  fi
}

# What ships has no symbol table: the release profile keeps one for backtraces' names, and it
# took the binary from about 20 to 27.8 MB, over the 25 MB bound; a panic still says its message.
shipped="$stage/shipped-$exe"
cp "$bin" "$shipped"
if [ "$target" = x86_64-unknown-linux-gnu ] && command -v strip >/dev/null; then
  strip "$shipped"
fi
bin="$shipped"

# The archive.
name="pidx-$version-$target"
mkdir -p "$stage/$name"
cp "$bin" "$stage/$name/$exe"
cp LICENSE README.md CHANGELOG.md "$stage/THIRD-PARTY-LICENSES.txt" "$stage/$name/"
pack_tar "$name.tar.gz" "$name"
(cd "$out" && sha256 "$name.tar.gz" >"$name.tar.gz.sha256")

# npm: the platform package, then the main one. Their versions are the crate's.
plat="$stage/npm-$platform"
mkdir -p "$plat/bin"
cp "$bin" "$plat/bin/$exe"
chmod 755 "$plat/bin/$exe"
cp LICENSE "$stage/THIRD-PARTY-LICENSES.txt" "$plat/"
PIDX_VERSION="$version" PIDX_PLATFORM="$platform" PIDX_OS="$os" PIDX_CPU="$cpu" node -e '
  const e = process.env;
  const pkg = {
    name: `@pidx/${e.PIDX_PLATFORM}`,
    version: e.PIDX_VERSION,
    description: `The pidx binary for ${e.PIDX_PLATFORM}; install the package pidx, which picks this one`,
    license: "MIT",
    os: [e.PIDX_OS],
    cpu: [e.PIDX_CPU],
    files: ["bin/", "LICENSE", "THIRD-PARTY-LICENSES.txt", "README.md"],
    preferUnplugged: true,
  };
  if (e.PIDX_OS === "linux") pkg.libc = ["glibc"];
  process.stdout.write(JSON.stringify(pkg, null, 2) + "\n");
' >"$plat/package.json"
printf '# @pidx/%s\n\nThe `pidx` binary for %s (Rust target %s), version %s. Install the package `pidx`\n(`npm install -g pidx`), which depends on this one where it fits; see https://www.npmjs.com/package/pidx.\n' \
  "$platform" "$platform" "$target" "$version" >"$plat/README.md"

main="$stage/npm-main"
mkdir -p "$main/bin" "$main/pi" "$main/skills/pidx"
cp "$here/npm/bin/pidx.js" "$here/npm/bin/platform.js" "$main/bin/"
chmod 755 "$main/bin/pidx.js"
cp integrations/pi/extension.ts integrations/pi/pidx.ts integrations/pi/picker.ts "$main/pi/"
cp skills/pidx/SKILL.md "$main/skills/pidx/"
cp "$here/npm/README.md" LICENSE CHANGELOG.md "$main/"
PIDX_VERSION="$version" node -e '
  const fs = require("fs");
  const pkg = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
  pkg.version = process.env.PIDX_VERSION;
  for (const d of Object.keys(pkg.optionalDependencies)) pkg.optionalDependencies[d] = process.env.PIDX_VERSION;
  process.stdout.write(JSON.stringify(pkg, null, 2) + "\n");
' "$here/npm/package.json" >"$main/package.json"

for dir in "$plat" "$main"; do
  (cd "$dir" && npm pack --silent --pack-destination "$out" >/dev/null)
done

echo "build.sh: wrote into $out:" >&2
(cd "$out" && ls -l "$name.tar.gz" "$name.tar.gz.sha256" "pidx-$version.tgz" "pidx-$platform-$version.tgz") >&2
echo "build.sh: binary $(wc -c <"$bin" | tr -d ' ') bytes; $("$bin" --version)" >&2
