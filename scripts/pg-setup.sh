#!/usr/bin/env bash
# Provide a local PostgreSQL 15 server with the pgvector extension for loregraph's PostgreSQL backend tests.
#
# Debian 12 ships PostgreSQL 15 but no pgvector package for it, so pgvector is compiled from the
# Debian (trixie) source package against the installed server headers. Everything comes from the
# configured Debian mirror; nothing else is downloaded.
#
# Must run as root. Safe to run again: each step checks whether it is already done.
#   LOREGRAPH_PG_PORT  listen port on 127.0.0.1   (default 54329)
#   LOREGRAPH_PG_ROOT  cluster + build directory  (default /tmp/loregraph-pg)
# Prints the connection URL on its last line, e.g. postgresql://postgres@127.0.0.1:54329/postgres
set -euo pipefail

major=15
port="${LOREGRAPH_PG_PORT:-54329}"
root="${LOREGRAPH_PG_ROOT:-/tmp/loregraph-pg}"
bindir="/usr/lib/postgresql/$major/bin"
libdir="/usr/lib/postgresql/$major/lib"
datadir="$root/cluster"
url="postgresql://postgres@127.0.0.1:$port/postgres"
export DEBIAN_FRONTEND=noninteractive

say() { echo "pg-setup: $*" >&2; }

as_postgres() { runuser -u postgres -- "$@"; }

install_server() {
  local pkgs=("postgresql-$major" "postgresql-server-dev-$major" postgresql-contrib build-essential dpkg-dev)
  local have
  have=$(dpkg-query -W -f='${Status}\n' "${pkgs[@]}" 2>/dev/null | grep -c 'install ok installed' || true)
  [ "$have" -eq "${#pkgs[@]}" ] && return
  say "installing postgresql-$major, its server headers and a compiler"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
}

add_trixie_sources() {
  # A deb-src entry for trixie, pointing at the same mirror the machine already uses.
  local list=/etc/apt/sources.list.d/loregraph-trixie-src.sources mirror
  [ -f "$list" ] && return 1
  mirror=$(grep -m1 -E '^URIs:' /etc/apt/sources.list.d/debian.sources 2>/dev/null | awk '{print $2}')
  if [ -z "$mirror" ]; then
    mirror=$(grep -m1 -E '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}')
  fi
  [ -n "$mirror" ] || { say "cannot find the Debian mirror in the apt configuration"; exit 1; }
  printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: %s\n' \
    "$mirror" /usr/share/keyrings/debian-archive-keyring.gpg > "$list"
  return 0
}

build_pgvector() {
  if [ -f "$libdir/vector.so" ]; then
    return
  fi
  say "building pgvector from the Debian trixie source package"
  add_trixie_sources && apt-get update -qq || true
  local build="$root/pgvector-build" src
  rm -rf "$build" && mkdir -p "$build"
  (cd "$build" && apt-get source -qq pgvector >/dev/null)
  src=$(find "$build" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | sort | tail -n1)
  [ -n "$src" ] || { say "apt-get source pgvector produced no source tree"; exit 1; }
  # Portable build (no -march=native) and no LLVM bitcode, so clang is not needed.
  make -s -C "$src" -j"$(nproc)" PG_CONFIG="$bindir/pg_config" OPTFLAGS="" with_llvm=no >/dev/null
  make -s -C "$src" install PG_CONFIG="$bindir/pg_config" with_llvm=no >/dev/null
}

start_cluster() {
  mkdir -p "$root"
  chown postgres:postgres "$root"
  if [ ! -s "$datadir/PG_VERSION" ]; then
    say "creating a throw-away cluster in $datadir"
    as_postgres "$bindir/initdb" -D "$datadir" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  fi
  if ! as_postgres "$bindir/pg_ctl" -D "$datadir" status >/dev/null 2>&1; then
    say "starting the server on 127.0.0.1:$port"
    # Test cluster only: durability settings are off for speed.
    as_postgres "$bindir/pg_ctl" -D "$datadir" -l "$root/server.log" -w -t 60 start \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$root -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" >/dev/null
  fi
}

check_extensions() {
  PGOPTIONS="-c client_min_messages=warning" psql "$url" -v ON_ERROR_STOP=1 -qAt >/dev/null <<'SQL'
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TEMP TABLE pg_setup_probe (id int, v vector(2));
INSERT INTO pg_setup_probe VALUES (1, '[1,0]'), (2, '[0,1]');
SELECT id FROM pg_setup_probe ORDER BY v <=> '[1,0.2]' LIMIT 1;
SQL
}

[ "$(id -u)" -eq 0 ] || { say "run as root (it installs packages and starts a server as user postgres)"; exit 1; }
install_server
build_pgvector
start_cluster
check_extensions
say "ready (stop: runuser -u postgres -- $bindir/pg_ctl -D $datadir -m fast stop)"
echo "$url"
