#!/usr/bin/env bash
# Two small Redis Sentinel deployments for test/brokers/redis/sentinel.test.ts, each one master,
# one replica and one sentinel watching them as master "bqmaster" (quorum 1: SENTINEL FAILOVER
# needs no vote), no passwords:
#
#   plain  BQ_REDIS_SENTINEL_PORT (7211) and +1 (7212) data servers (the first is the master at
#          the first start), +2 (7213) the sentinel
#   tls    +3, +4 data servers and +5 (7216) the sentinel, TLS only (also between them), with the
#          certificates of test/support/make-certs.sh in $BQ_TEST_CERTS_DIR (default /tmp/bq-test-certs)
#
#   test/brokers/redis/sentinel.sh start|stop|status
# start is idempotent: a deployment whose sentinel already knows a master with a replica is left
# alone (after a failover either data server may be the master). start waits until the sentinel
# sees the replica, so a test's SENTINEL FAILOVER has one to promote.
# State: ${BQ_REDIS_SENTINEL_HOME:-/tmp/bq-redis-sentinel}.
set -euo pipefail

STATE=${BQ_REDIS_SENTINEL_HOME:-/tmp/bq-redis-sentinel}
CERTS=${BQ_TEST_CERTS_DIR:-/tmp/bq-test-certs}
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
BASE_PORT=${BQ_REDIS_SENTINEL_PORT:-7211}
MASTER_NAME=bqmaster
# deployment first-port tls
DEPLOYMENTS=("plain $BASE_PORT no" "tls $((BASE_PORT + 3)) yes")

# redis-cli to 127.0.0.1:<port> of a deployment, over TLS for the tls one.
cli() { # <tls> <port> args...
  local tls=$1 port=$2
  shift 2
  if [ "$tls" = yes ]; then
    redis-cli --tls --cacert "$CERTS/ca.pem" -h 127.0.0.1 -p "$port" "$@" 2>/dev/null
  else
    redis-cli -h 127.0.0.1 -p "$port" "$@" 2>/dev/null
  fi
}

# The sentinel names a master and sees at least one replica that is not down.
healthy() { # <tls> <sentinel-port>
  cli "$1" "$2" SENTINEL get-master-addr-by-name "$MASTER_NAME" | grep -q . || return 1
  cli "$1" "$2" SENTINEL replicas "$MASTER_NAME" | grep -qx 'slave' || return 1
}

# What a server of the tls deployment adds to its config: TLS only, also to its master.
tls_config() {
  echo "port 0"
  echo "tls-port $1"
  echo "tls-cert-file $CERTS/server.pem"
  echo "tls-key-file $CERTS/server.key"
  echo "tls-ca-cert-file $CERTS/ca.pem"
  # What a replica and the sentinel present when they connect (the server certificate is not for clients).
  echo "tls-client-cert-file $CERTS/client.pem"
  echo "tls-client-key-file $CERTS/client.key"
  echo "tls-auth-clients optional"
  echo "tls-replication yes"
}

start_data() { # <dir> <port> <tls> [replicaof-port]
  local dir=$1 port=$2 tls=$3 of=${4:-}
  if cli "$tls" "$port" PING | grep -q PONG; then return; fi
  mkdir -p "$dir"
  {
    echo "bind 127.0.0.1"
    if [ "$tls" = yes ]; then tls_config "$port"; else echo "port $port"; fi
    echo 'save ""'
    echo "appendonly no"
    echo "maxmemory 64mb"
    echo "dir $dir"
    echo "pidfile $dir/redis.pid"
    echo "logfile $dir/redis.log"
    echo "daemonize yes"
    if [ -n "$of" ]; then echo "replicaof 127.0.0.1 $of"; fi
  } >"$dir/redis.conf"
  redis-server "$dir/redis.conf"
}

start_sentinel() { # <dir> <port> <tls> <master-port>
  local dir=$1 port=$2 tls=$3 master=$4
  if cli "$tls" "$port" PING | grep -q PONG; then return; fi
  mkdir -p "$dir"
  # The sentinel rewrites its file (what it learns), so it is written fresh only when it is not running.
  {
    echo "bind 127.0.0.1"
    if [ "$tls" = yes ]; then tls_config "$port"; else echo "port $port"; fi
    echo "dir $dir"
    echo "pidfile $dir/sentinel.pid"
    echo "logfile $dir/sentinel.log"
    echo "daemonize yes"
    echo "sentinel monitor $MASTER_NAME 127.0.0.1 $master 1"
    echo "sentinel down-after-milliseconds $MASTER_NAME 5000"
    echo "sentinel failover-timeout $MASTER_NAME 10000"
    echo "sentinel parallel-syncs $MASTER_NAME 1"
  } >"$dir/sentinel.conf"
  redis-server "$dir/sentinel.conf" --sentinel
}

start_deployment() { # <name> <first-port> <tls>
  local name=$1 first=$2 tls=$3 sentinel=$(($2 + 2))
  if healthy "$tls" "$sentinel"; then echo "redis-sentinel: $name already running (sentinel on $sentinel)"; return; fi
  start_data "$STATE/$name/first" "$first" "$tls"
  start_data "$STATE/$name/second" "$((first + 1))" "$tls" "$first"
  start_sentinel "$STATE/$name/sentinel" "$sentinel" "$tls" "$first"
  for _ in $(seq 300); do
    if healthy "$tls" "$sentinel"; then echo "redis-sentinel: $name: master $MASTER_NAME on $first/$((first + 1)), sentinel on $sentinel"; return; fi
    sleep 0.1
  done
  echo "redis-sentinel: the $name sentinel on $sentinel did not see a master with a replica within 30 s; last log lines:" >&2
  tail -n 20 "$STATE/$name/sentinel/sentinel.log" >&2 || true
  exit 1
}

stop_pid() { # <pidfile>
  [ -f "$1" ] || return 0
  local pid
  pid=$(cat "$1")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$1"
}

case "${1:-}" in
  start)
    command -v redis-server >/dev/null || { echo "redis-sentinel: redis-server is not installed (apt-get install redis-server)" >&2; exit 1; }
    bash "$REPO_ROOT/test/support/make-certs.sh" "$CERTS"
    for deployment in "${DEPLOYMENTS[@]}"; do
      # shellcheck disable=SC2086 # name port tls
      start_deployment $deployment
    done
    ;;
  stop)
    for deployment in "${DEPLOYMENTS[@]}"; do
      name=${deployment%% *}
      stop_pid "$STATE/$name/sentinel/sentinel.pid"
      stop_pid "$STATE/$name/second/redis.pid"
      stop_pid "$STATE/$name/first/redis.pid"
    done
    echo "redis-sentinel: stopped"
    ;;
  status)
    for deployment in "${DEPLOYMENTS[@]}"; do
      read -r name first tls <<<"$deployment"
      if healthy "$tls" "$((first + 2))"; then
        echo "redis-sentinel: $name healthy; master $(cli "$tls" "$((first + 2))" SENTINEL get-master-addr-by-name "$MASTER_NAME" | paste -sd: -)"
      else
        echo "redis-sentinel: $name not running (or no replica seen)"
      fi
    done
    ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
