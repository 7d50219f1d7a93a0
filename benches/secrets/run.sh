#!/usr/bin/env bash
# The secrets benchmark in one command: precision on ordinary code (the Python standard library
# and the cargo registry's crate sources as pi sessions, `pidx secrets` over them) and recall
# on public secret scanners' test cases. Method, sources and numbers: docs/secrets.md.
#
#   bash benches/secrets/run.sh [--half report|tune|all] [--work DIR] [--misses]
#
# The scanners' repositories are read from git snapshots (default /work/.mirror/OWNER+NAME/repo,
# or --gitleaks/--trufflehog/... through fetch.py); without any, recall is SKIPPED loudly.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${CARGO_TARGET_DIR:-target}
cargo build --release --quiet --bin pidx --example secrets_cases
exec python3 benches/secrets/run.py --pidx "$target/release/pidx" \
  --cases-bin "$target/release/examples/secrets_cases" "$@"
