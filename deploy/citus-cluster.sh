#!/usr/bin/env bash
# A Citus cluster for tests and benchmarks: a coordinator and two workers (a third on demand),
# Debian's PostgreSQL 15 with Citus 13 (../shared/citus/build.sh, or the Citus packages), each
# node a host of its own: its own network namespace and address on a bridge when root can make
# them, else its own port on 127.0.0.1. For tests only: every node trusts every connection from
# the cluster's network (pg_hba `trust`); a real deployment sets passwords or certificates.
#
#   deploy/citus-cluster.sh up            # start (or find running) coordinator + 2 workers
#   deploy/citus-cluster.sh down          # stop every node, remove the namespaces and the data
#   deploy/citus-cluster.sh env           # DATABASE_URL=... (the coordinator's swarm database)
#   deploy/citus-cluster.sh status
#   deploy/citus-cluster.sh database NAME # a fresh database NAME on every node, its URL printed
#   deploy/citus-cluster.sh drop-database NAME
#   deploy/citus-cluster.sh add-worker N [DB]  # start worker N (3), add it to DB (swarm)
#   deploy/citus-cluster.sh kill N        # SIGKILL worker N's postmaster (a crash)
#   deploy/citus-cluster.sh start N       # start node N again (after kill)
#   deploy/citus-cluster.sh cut N         # take worker N's link down (netns mode only)
#   deploy/citus-cluster.sh heal N        # bring it back up
#
# Settings every node gets (the ones a user's own Citus needs are in the README, "Citus"):
# shared_preload_libraries=citus, citus.node_connection_timeout (3 s: a lost worker fails
# writes to its shards quickly instead of after the kernel's TCP timeout),
# citus.enable_stat_counters (citus_stat_counters: single- and multi-shard executions),
# wal_level=logical (shard moves, citus_rebalance_start).
set -euo pipefail

PGBIN="${PGBIN:-/usr/lib/postgresql/15/bin}"
BASE="${SWARM_CITUS_DIR:-/tmp/swarm-citus}"
DB="${SWARM_CITUS_DB:-swarm}"
NET="${SWARM_CITUS_NET:-10.231.7}"      # netns mode: the bridge is .1, node i is .(10+i)
NAME="${SWARM_CITUS_NAME:-swcitus}"     # netns mode: namespaces NAME1.., bridge NAME0, veths NAMEv1..
BRIDGE="${NAME}0"
LOCAL_PORT="${SWARM_CITUS_PORT:-57400}"  # local mode: node i listens on 127.0.0.1:(port+i)
WORKERS="${SWARM_CITUS_WORKERS:-2}"

say() { printf 'citus-cluster: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

as_postgres() {  # run a command as the postgres user (PostgreSQL refuses root)
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

mode() {
  if [ -f "$BASE/mode" ]; then cat "$BASE/mode"; return; fi
  if [ -n "${SWARM_CITUS_MODE:-}" ]; then echo "$SWARM_CITUS_MODE"; return; fi  # netns or local
  if [ "$(id -u)" = 0 ] && command -v ip >/dev/null && ip netns add "$NAME-probe" 2>/dev/null; then
    ip netns delete "$NAME-probe"
    echo netns
  else
    echo local
  fi
}

host_of() { if [ "$(mode)" = netns ]; then echo "$NET.$((10 + $1))"; else echo 127.0.0.1; fi; }
port_of() { if [ "$(mode)" = netns ]; then echo 5432; else echo $((LOCAL_PORT + $1)); fi; }
ns_of() { echo "$NAME$1"; }
in_node() {  # run a command in node $1's namespace (or here, in local mode)
  local i="$1"; shift
  if [ "$(mode)" = netns ]; then ip netns exec "$(ns_of "$i")" "$@"; else "$@"; fi
}
psql_node() {  # psql_node I DB SQL...
  local i="$1" db="$2"; shift 2
  "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -At -h "$(host_of "$i")" -p "$(port_of "$i")" \
    -U postgres -d "$db" "$@"
}

network() {  # the bridge and node $1's namespace and veth pair (netns mode)
  local i="$1" ns veth
  [ "$(mode)" = netns ] || return 0
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    ip addr add "$NET.1/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
  fi
  ns="$(ns_of "$i")"; veth="${NAME}v$i"
  if ! ip netns list | grep -qw "$ns"; then
    ip link delete "$veth" 2>/dev/null || true  # left by a namespace still being torn down
    ip netns add "$ns"
    ip link add "$veth" type veth peer name eth0 netns "$ns"
    ip link set "$veth" master "$BRIDGE" up
    ip netns exec "$ns" ip link set lo up
    ip netns exec "$ns" ip addr add "$(host_of "$i")/24" dev eth0
    ip netns exec "$ns" ip link set eth0 up
  fi
}

init_node() {
  local i="$1" dir="$BASE/node$1"
  [ -f "$dir/data/PG_VERSION" ] && return 0
  mkdir -p "$dir"
  chown postgres: "$dir" 2>/dev/null || true
  as_postgres "$PGBIN/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale >/dev/null
  cat >>"$dir/data/postgresql.conf" <<EOF
# deploy/citus-cluster.sh
listen_addresses = '$(host_of "$i")'
citus.local_hostname = '$(host_of "$i")'
port = $(port_of "$i")
unix_socket_directories = '$dir'
shared_preload_libraries = 'citus'
max_connections = 300
max_worker_processes = 64
max_logical_replication_workers = 16
shared_buffers = 128MB
wal_level = logical
max_replication_slots = 16
max_wal_senders = 16
citus.node_connection_timeout = 3000
citus.node_conninfo = 'sslmode=require tcp_user_timeout=3000'
citus.shard_count = 8
citus.enable_stat_counters = on
citus.max_client_connections = 250
log_min_messages = warning
log_line_prefix = '%m node$i [%p] '
EOF
  if [ "$(mode)" = netns ]; then
    echo "host all all $NET.0/24 trust" >>"$dir/data/pg_hba.conf"
  fi
}

start_node() {
  local i="$1" dir="$BASE/node$1"
  network "$i"
  init_node "$i"
  if in_node "$i" "$PGBIN/pg_isready" -q -U postgres -h "$(host_of "$i")" -p "$(port_of "$i")"; then
    return 0
  fi
  if [ -f "$dir/data/postmaster.pid" ]; then  # after a SIGKILL: its pid and socket lock stay
    local pid state
    pid="$(head -1 "$dir/data/postmaster.pid")"
    state="$(awk '/^State:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)"
    if [ -z "$state" ] || [ "$state" = Z ]; then
      rm -f "$dir/data/postmaster.pid" "$dir"/.s.PGSQL.*.lock
    fi
  fi
  in_node "$i" runuser -u postgres -- "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
    start >/dev/null || { tail -20 "$dir/log" >&2; die "node $i did not start"; }
}

stop_node() {
  local i="$1" dir="$BASE/node$1"
  if [ -f "$dir/data/postmaster.pid" ]; then
    in_node "$i" runuser -u postgres -- "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop \
      >/dev/null 2>&1 || kill -9 "$(head -1 "$dir/data/postmaster.pid")" 2>/dev/null || true
  fi
  if [ "$(mode)" = netns ]; then
    ip netns delete "$(ns_of "$i")" 2>/dev/null || true
  fi
}

database() {  # database $2 (default: swarm) on node $1, with the citus extension
  local i="$1" db="${2:-$DB}"
  if [ -z "$(psql_node "$i" postgres -c "select 1 from pg_database where datname = '$db'")" ]; then
    psql_node "$i" postgres -c "create database $db"
  fi
  psql_node "$i" "$db" -c "create extension if not exists citus"
}

new_database() {  # database $1 on every node of the cluster, its workers added, its URL printed
  local db="$1" i
  [[ "$db" =~ ^[a-z_][a-z0-9_]*$ ]] || die "a database name is [a-z_][a-z0-9_]*"
  for i in $(active_nodes); do database "$i" "$db"; done
  psql_node 0 "$db" -c "select citus_set_coordinator_host('$(host_of 0)', $(port_of 0))" >/dev/null
  for i in $(active_nodes); do
    [ "$i" = 0 ] && continue
    psql_node 0 "$db" -c "select citus_add_node('$(host_of "$i")', $(port_of "$i"))" >/dev/null
  done
  echo "postgresql://postgres@$(host_of 0):$(port_of 0)/$db"
}

drop_database() {
  local db="$1" i
  [[ "$db" =~ ^[a-z_][a-z0-9_]*$ ]] || die "a database name is [a-z_][a-z0-9_]*"
  for i in $(active_nodes); do
    for attempt in 1 2 3 4 5; do  # a node's Citus daemons may reconnect meanwhile
      psql_node "$i" postgres -c "drop database if exists $db with (force)" >/dev/null 2>&1 && break
      [ "$attempt" = 5 ] && psql_node "$i" postgres -c "drop database if exists $db with (force)"
      sleep 1
    done
  done
}

active_nodes() {  # the nodes of the swarm database's cluster: the coordinator and its workers
  local i
  echo 0
  for i in $(nodes_started); do
    [ "$i" = 0 ] && continue
    if [ -n "$(psql_node 0 "$DB" -c "select 1 from pg_dist_node where nodename = '$(host_of "$i")'
                                       and nodeport = $(port_of "$i") and isactive")" ]; then
      echo "$i"
    fi
  done
}

add_worker() {  # worker $1 started and added to database $2 (default: swarm) of the cluster
  local i="$1" db="${2:-$DB}"
  start_node "$i"
  database "$i"
  [ "$db" = "$DB" ] || database "$i" "$db"
  psql_node 0 "$db" -c \
    "select citus_add_node('$(host_of "$i")', $(port_of "$i")) where not exists (
       select 1 from pg_dist_node where nodename = '$(host_of "$i")'
        and nodeport = $(port_of "$i"))" >/dev/null
}

nodes_started() { ls -d "$BASE"/node* 2>/dev/null | sed 's/.*node//' | sort -n; }

up() {
  [ -f "$PGBIN/postgres" ] || die "no PostgreSQL 15 in $PGBIN (apt-get install postgresql-15)"
  [ -f "$("$PGBIN/pg_config" --pkglibdir)/citus.so" ] ||
    die "Citus is not installed (bash ../shared/citus/build.sh, or the Citus 13 packages)"
  mkdir -p "$BASE"
  chmod 755 "$BASE"
  if [ ! -f "$BASE/mode" ]; then mode >"$BASE/mode.new"; mv -f "$BASE/mode.new" "$BASE/mode"; fi
  say "mode: $(mode) (nodes in $BASE)"
  start_node 0
  database 0
  psql_node 0 "$DB" -c "select citus_set_coordinator_host('$(host_of 0)', $(port_of 0))" >/dev/null
  for i in $(seq 1 "$WORKERS"); do add_worker "$i"; done
  env_file
  say "up: $(psql_node 0 "$DB" -c "select count(*) from citus_get_active_worker_nodes()") workers; $(cat "$BASE/env")"
}

env_file() {
  {
    echo "DATABASE_URL=postgresql://postgres@$(host_of 0):$(port_of 0)/$DB"
    echo "SWARM_CITUS_MODE=$(mode)"
  } >"$BASE/env"
}

down() {
  local i
  for i in $(nodes_started | sort -rn); do stop_node "$i"; done
  if [ "$(mode)" = netns ] && ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link delete "$BRIDGE"
  fi
  rm -rf "$BASE"
  say "down"
}

status() {
  local i
  [ -f "$BASE/env" ] || { say "not up"; return 1; }
  cat "$BASE/env"
  for i in $(nodes_started); do
    if in_node "$i" "$PGBIN/pg_isready" -q -U postgres -h "$(host_of "$i")" -p "$(port_of "$i")"; then
      echo "node$i $(host_of "$i"):$(port_of "$i") up"
    else
      echo "node$i $(host_of "$i"):$(port_of "$i") DOWN"
    fi
  done
}

cmd="${1:-}"
case "$cmd" in
  up) up ;;
  down) down ;;
  env) cat "$BASE/env" ;;
  status) status ;;
  database) new_database "${2:?database name}" ;;
  drop-database) drop_database "${2:?database name}" ;;
  add-worker) add_worker "${2:?worker number}" "${3:-$DB}"; say "worker $2 added" ;;
  kill)
    pid="$(head -1 "$BASE/node${2:?worker number}/data/postmaster.pid")"
    pkill -KILL -P "$pid" || true  # its backends too: the whole server dies at once
    kill -9 "$pid"
    say "SIGKILLed node $2's postmaster ($pid)" ;;
  start) start_node "${2:?node number}" ;;
  cut)
    [ "$(mode)" = netns ] || die "cut needs netns mode (root)"
    ip link set "${NAME}v${2:?worker number}" down; say "node $2 cut off" ;;
  heal)
    [ "$(mode)" = netns ] || die "heal needs netns mode (root)"
    ip link set "${NAME}v${2:?worker number}" up; say "node $2 back" ;;
  *) sed -n '2,22p' "$0"; exit 2 ;;
esac
