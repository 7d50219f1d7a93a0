#!/usr/bin/env bash
# Live test of the team tier against a real PostgreSQL server: installs Debian's `postgresql`
# when missing (skips LOUDLY when it cannot), starts a throwaway cluster in a temp folder on a
# unix socket (initdb + pg_ctl, run as the `postgres` system user because initdb refuses root;
# as a normal user it runs as that user), creates a writer and a read-only role, runs
# tests/pg.rs with PIDX_TEST_PG_URL / PIDX_TEST_PG_READER_URL / PIDX_TEST_PG_ADMIN_URL, and stops
# the server afterwards whatever happens.
#
#   bash tests/pg/run.sh            # from the repository root
set -euo pipefail
cd "$(dirname "$0")/../.."

skip() { echo "!!!!!!!! SKIPPED: PostgreSQL live test: $* !!!!!!!!" >&2; exit 0; }

find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
BIN=$(find_bin || true)
if [[ -z "$BIN" || ! -x "$BIN/initdb" ]]; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "pg live test: installing postgresql (apt-get)" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) \
      || skip "apt-get install postgresql failed"
    BIN=$(find_bin || true)
  fi
fi
[[ -n "$BIN" && -x "$BIN/initdb" ]] || skip "no PostgreSQL server binaries and no way to install them"

TMP=$(mktemp -d /tmp/pidx-pg.XXXXXX)
RUN=()
if [[ $(id -u) -eq 0 ]]; then
  id postgres >/dev/null 2>&1 || skip "running as root but there is no postgres user to run the server"
  chown postgres "$TMP"
  RUN=(runuser -u postgres --)
fi
chmod 755 "$TMP"
DATA="$TMP/data"
PORT=$(( 20000 + RANDOM % 20000 ))
stop() {
  "${RUN[@]}" "$BIN/pg_ctl" -D "$DATA" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap stop EXIT
"${RUN[@]}" "$BIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
"${RUN[@]}" "$BIN/pg_ctl" -D "$DATA" -l "$TMP/server.log" -w \
  -o "-k $TMP -p $PORT -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c max_connections=60" start >/dev/null
PSQL=("$BIN/psql" -h "$TMP" -p "$PORT" -U postgres -v ON_ERROR_STOP=1 -q)
"${PSQL[@]}" -d postgres -c "CREATE ROLE pidx_writer LOGIN" -c "CREATE ROLE pidx_reader LOGIN" \
  -c "CREATE DATABASE pidx OWNER pidx_writer"
export PIDX_TEST_PG_URL="postgresql:///pidx?host=$TMP&port=$PORT&user=pidx_writer"
export PIDX_TEST_PG_READER_URL="postgresql:///pidx?host=$TMP&port=$PORT&user=pidx_reader"
export PIDX_TEST_PG_ADMIN_URL="postgresql:///postgres?host=$TMP&port=$PORT&user=postgres"
export PIDX_TEST_PG_PSQL="$BIN/psql"
cargo test --test pg -- --test-threads=1 "$@"
