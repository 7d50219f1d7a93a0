# Sourced by tests/pg/run.sh and benches/pg.sh: a throwaway PostgreSQL server. Installs Debian's
# `postgresql` when missing (as root with apt-get; `pg_skip` otherwise), starts a cluster in a
# temp folder on a unix socket (initdb + pg_ctl, as the `postgres` system user when root, since
# initdb refuses root), stops it and removes the folder on exit. Defines BIN, PG_TMP, PG_PORT.
#
#   pg_skip() { ...; }              # what to do when there is no server (define before sourcing)
#   source tests/pg/server.sh
#   pg_start [-c setting=value ...]  # extra server settings

find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
BIN=$(find_bin || true)
if [[ -z "$BIN" || ! -x "$BIN/initdb" ]]; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "pg: installing postgresql (apt-get)" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) \
      || pg_skip "apt-get install postgresql failed"
    BIN=$(find_bin || true)
  fi
fi
[[ -n "$BIN" && -x "$BIN/initdb" ]] || pg_skip "no PostgreSQL server binaries and no way to install them"

PG_TMP=$(mktemp -d "${PG_TMP_PREFIX:-/tmp/pidx-pg}.XXXXXX")
PG_RUN=()
if [[ $(id -u) -eq 0 ]]; then
  id postgres >/dev/null 2>&1 || pg_skip "running as root but there is no postgres user to run the server"
  chown postgres "$PG_TMP"
  PG_RUN=(runuser -u postgres --)
fi
chmod 755 "$PG_TMP"
PG_PORT=$(( 20000 + RANDOM % 20000 ))
pg_stop() {
  "${PG_RUN[@]}" "$BIN/pg_ctl" -D "$PG_TMP/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$PG_TMP"
}
trap pg_stop EXIT
pg_start() {
  "${PG_RUN[@]}" "$BIN/initdb" -D "$PG_TMP/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  "${PG_RUN[@]}" "$BIN/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/server.log" -w \
    -o "-k $PG_TMP -p $PG_PORT -c listen_addresses='' -c max_connections=60 $*" start >/dev/null
  PSQL=("$BIN/psql" -h "$PG_TMP" -p "$PG_PORT" -U postgres -v ON_ERROR_STOP=1 -q)
  "${PSQL[@]}" -d postgres -c "CREATE ROLE pidx_writer LOGIN" -c "CREATE ROLE pidx_reader LOGIN" \
    -c "CREATE DATABASE pidx OWNER pidx_writer"
}
