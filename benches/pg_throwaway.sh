# Sourced by benches/pg_size.sh and benches/pg_push_profile.sh: the pidx to measure and a
# throwaway PostgreSQL server (tests/pg/server.sh) with a work folder, both gone on exit.
#
#   source benches/pg_throwaway.sh
#   pg_throwaway NAME [-c setting=value ...]   # sets T, P (PIDX_BIN or a fresh release build,
#                                              # with gen_corpus), W, URL; the rest are
#                                              # pg_start's server settings

pg_throwaway() {
  local name=$1
  shift
  T=${CARGO_TARGET_DIR:-target}/release
  if [[ -z "${PIDX_BIN:-}" ]]; then
    cargo build --release --bin pidx --example gen_corpus >/dev/null 2>&1
  fi
  P=${PIDX_BIN:-$T/pidx}
  W=$(mktemp -d "/tmp/pidx-$name.XXXXXX")
  pg_skip() { echo "$0: no PostgreSQL server: $*" >&2; exit 1; }
  PG_TMP_PREFIX=/tmp/pidx-$name-server
  source tests/pg/server.sh
  pg_start "$@"
  trap 'pg_stop; rm -rf "$W"' EXIT
  URL="postgresql:///pidx?host=$PG_TMP&port=$PG_PORT&user=pidx_writer"
}
