#!/usr/bin/env bash
# The first answer on a new index when a few session files are not named as pi names them
# (imports, renamed files): `list --all --limit 20` with and without six such files beside a
# generated corpus, against a full first sync (what the answer cost when odd names made it read
# everything). Medians of RUNS; release build.
#   bash benches/odd-names.sh [SESSIONS] [BYTES] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
sessions="${1:-2500}"; bytes="${2:-700M}"; runs="${3:-3}"
cargo build --release --quiet --bin pidx --example gen_corpus
target="${CARGO_TARGET_DIR:-target}/release"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
"$target/examples/gen_corpus" --out "$tmp/plain" --sessions "$sessions" --bytes "$bytes" >/dev/null
# -p: the same mtimes as plain, so only the six names differ (a copy without its times
# makes every file look new, a different slow path; env.rs says so when it happens).
cp -rp "$tmp/plain" "$tmp/odd"
# Six files as an import or a rename leaves them: old mtimes, names without the id.
i=0
for f in $(find "$tmp/odd" -name '*.jsonl' | sort | head -6); do
  i=$((i + 1))
  mkdir -p "$tmp/odd/--imported-$i--"
  cp -p "$f" "$tmp/odd/--imported-$i--/imported-$i.jsonl"
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_one() { # ROOT ARGS... -> seconds, on a new index each time
  local root="$1"; shift
  local db="$tmp/i.db"
  local s=$(date +%s.%N)
  PIDX_FIRST_ANSWER_BYTES=64000000 "$target/pidx" --db "$db" --root "$root" "$@" >/dev/null 2>"$tmp/err"
  local e=$(date +%s.%N)
  # Let the background sync a first answer started finish before the next run.
  "$target/pidx" --db "$db" --root "$root" sync >/dev/null 2>&1 || true
  rm -f "$db" "$db"-*
  echo "$e - $s" | bc
}
for what in plain odd; do
  for cmd in "list --all --limit 20" "sync"; do
    t=$(for _ in $(seq "$runs"); do time_one "$tmp/$what" $cmd; done | median)
    printf '| %s | `%s` | %.2f s |\n' "$what" "$cmd" "$t"
  done
done
grep -h 'pidx:' "$tmp/err" | head -3 || true
