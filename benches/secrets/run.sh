#!/usr/bin/env bash
# The secrets benchmark in one command: precision on ordinary code (set old: the Python
# standard library and the cargo registry's crate sources; set new: npm packages' JS/TS and
# Debian's docs; as pi sessions, `pidx secrets` over them) and recall on public secret
# scanners' test cases (old: gitleaks, trufflehog, detect-secrets, Nosey Parker; new:
# secretlint, ripsecrets). Method, sources and numbers: docs/secrets.md.
#
#   bash benches/secrets/run.sh [--half report|tune|spare|all] [--set old|new|fresh|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|fourteenth|all] [--work DIR] [--misses] [--dir DIR]
#
# The scanners' repositories are read from git snapshots (default /work/.mirror/OWNER+NAME/repo,
# or --gitleaks/--secretlint/... through fetch.py); without any, recall is SKIPPED loudly.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${CARGO_TARGET_DIR:-target}
cargo build --release --quiet --bin pidx --example secrets_cases
exec python3 benches/secrets/run.py --pidx "$target/release/pidx" \
  --cases-bin "$target/release/examples/secrets_cases" "$@"
