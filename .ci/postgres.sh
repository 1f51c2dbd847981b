#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the store tests and prints the one
# line that points them at it:
#
#   eval "$(bash .ci/postgres.sh)"     # sets ATTUNE_TEST_POSTGRES
#   bash .ci/postgres.sh stop          # stops the cluster again
#
# PostgreSQL is installed with apt-get when no server binaries are found under
# /usr/lib/postgresql/*/bin ($ATTUNE_PG_LIBDIR). The cluster lives in $ATTUNE_PG_ROOT (default
# /tmp/attune-postgres), belongs to the postgres user, trusts local
# connections and listens only on a Unix socket in that folder (mode 0700),
# never on TCP. Running the script again reuses a running cluster, restarts a
# stopped one and re-creates a broken one.
#
# Everything but the export line goes to stderr. When PostgreSQL cannot be had
# the script says why on stderr, prints nothing on stdout and exits 0; the
# PostgreSQL tests (built with -tags e2e) then fail, saying what is missing.
set -u

root=${ATTUNE_PG_ROOT:-/tmp/attune-postgres}
port=${ATTUNE_PG_PORT:-55432}
dbname=${ATTUNE_PG_DATABASE:-attune_test}
libdir=${ATTUNE_PG_LIBDIR:-/usr/lib/postgresql} # where Debian puts the server binaries
data=$root/data
sock=$root/sock

say() { echo "postgres.sh: $*" >&2; }
give_up() {
	say "warning: $*; the PostgreSQL tests (-tags e2e) will fail"
	exit 0
}

bin_dir() {
	local d
	for d in $(ls -d "$libdir"/*/bin 2>/dev/null | sort -V -r); do
		if [ -x "$d/pg_ctl" ] && [ -x "$d/initdb" ] && [ -x "$d/postgres" ]; then
			echo "$d"
			return
		fi
	done
}

is_root() { [ "$(id -u)" = 0 ]; }

# as_pg runs a command as the cluster's owner: postgres when we are root
# (the server refuses to run as root), ourselves otherwise.
as_pg() {
	if is_root; then
		if command -v runuser >/dev/null 2>&1; then
			runuser -u postgres -- "$@"
		else
			su postgres -s /bin/sh -c "$(printf '%q ' "$@")"
		fi
	else
		"$@"
	fi
}

bin=$(bin_dir)

if [ "${1:-}" = stop ]; then
	if [ -n "$bin" ] && [ -f "$data/PG_VERSION" ]; then
		as_pg "$bin/pg_ctl" -D "$data" -m fast -w stop >&2 || true
	fi
	exit 0
fi

if [ -z "$bin" ]; then
	is_root || give_up "PostgreSQL is not installed and only root may install it"
	command -v apt-get >/dev/null 2>&1 || give_up "PostgreSQL is not installed and there is no apt-get"
	say "installing PostgreSQL with apt-get"
	export DEBIAN_FRONTEND=noninteractive
	if ! { apt-get update -qq && apt-get install -y -qq postgresql; } >&2; then
		give_up "apt-get could not install postgresql"
	fi
	bin=$(bin_dir)
	[ -n "$bin" ] || give_up "no PostgreSQL server binaries under $libdir after installing"
fi
version=$(basename "$(dirname "$bin")")

if is_root && ! id postgres >/dev/null 2>&1; then
	useradd --system --home-dir "$root" --shell /bin/sh postgres >&2 ||
		give_up "could not create the postgres user"
fi

prepare_dirs() {
	mkdir -p "$root" "$sock" || give_up "cannot create $root"
	if is_root; then
		chown postgres: "$root" "$sock" || give_up "cannot give $root to postgres"
	fi
	chmod 700 "$root" "$sock"
}

init_cluster() {
	say "creating a PostgreSQL $version cluster in $data"
	rm -rf "$data"
	as_pg "$bin/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C --no-sync >/dev/null 2>"$root/initdb.log" || {
		cat "$root/initdb.log" >&2
		return 1
	}
}

running() { as_pg "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; }

start_cluster() {
	say "starting PostgreSQL on socket $sock/.s.PGSQL.$port"
	as_pg "$bin/pg_ctl" -D "$data" -l "$root/server.log" -w -t 60 -o \
		"-p $port -k $sock -c listen_addresses= -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
		start >/dev/null 2>&1 || {
		tail -n 20 "$root/server.log" >&2 2>/dev/null
		return 1
	}
}

psql_pg() { as_pg "$bin/psql" -X -q -h "$sock" -p "$port" -U postgres "$@"; }

prepare_dirs
if [ -f "$data/PG_VERSION" ] && [ "$(cat "$data/PG_VERSION")" != "$version" ]; then
	say "the cluster in $data is from PostgreSQL $(cat "$data/PG_VERSION"), not $version"
	as_pg "$bin/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$data"
fi
if running; then
	# The port the running server listens on is line 4 of postmaster.pid.
	port=$(sed -n 4p "$data/postmaster.pid")
	say "reusing the cluster running in $data"
else
	if [ ! -f "$data/PG_VERSION" ]; then
		init_cluster || give_up "initdb failed"
	fi
	if ! start_cluster; then
		say "the cluster in $data does not start; creating it again"
		{ init_cluster && start_cluster; } || give_up "PostgreSQL does not start (see $root/server.log)"
	fi
fi

exists=$(psql_pg -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$dbname'" 2>/dev/null) ||
	give_up "cannot connect to the cluster in $data"
if [ "$exists" != 1 ]; then
	psql_pg -d postgres -c "CREATE DATABASE \"$dbname\"" >&2 || give_up "cannot create database $dbname"
fi
say "PostgreSQL $version is ready: database $dbname"
echo "export ATTUNE_TEST_POSTGRES='postgres://postgres@/$dbname?host=$sock&port=$port&sslmode=disable'"
