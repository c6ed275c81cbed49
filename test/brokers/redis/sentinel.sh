#!/usr/bin/env bash
# A small Redis Sentinel deployment for test/brokers/redis/sentinel.test.ts: one master, one
# replica and one sentinel watching them as master "bqmaster" (quorum 1: SENTINEL FAILOVER
# needs no vote). Plaintext, no passwords.
#
#   BQ_REDIS_SENTINEL_PORT (7211)  first data server (the master at the first start)
#   +1 (7212)                      second data server (its replica)
#   +2 (7213)                      the sentinel
#
#   test/brokers/redis/sentinel.sh start|stop|status
# start is idempotent: a deployment whose sentinel already knows a master with a replica is left
# alone (after a failover either data server may be the master). start waits until the sentinel
# sees the replica, so a test's SENTINEL FAILOVER has one to promote.
# State: ${BQ_REDIS_SENTINEL_HOME:-/tmp/bq-redis-sentinel}.
set -euo pipefail

STATE=${BQ_REDIS_SENTINEL_HOME:-/tmp/bq-redis-sentinel}
BASE_PORT=${BQ_REDIS_SENTINEL_PORT:-7211}
FIRST=$BASE_PORT
SECOND=$((BASE_PORT + 1))
SENTINEL=$((BASE_PORT + 2))
MASTER_NAME=bqmaster

cli() { redis-cli -h 127.0.0.1 "$@" 2>/dev/null; }

# The sentinel names a master and sees at least one replica that is not down.
healthy() {
  cli -p "$SENTINEL" SENTINEL get-master-addr-by-name "$MASTER_NAME" | grep -q . || return 1
  cli -p "$SENTINEL" SENTINEL replicas "$MASTER_NAME" | grep -qx 'slave' || return 1
}

start_data() { # <name> <port> [replicaof-port]
  local name=$1 port=$2 of=${3:-}
  if cli -p "$port" PING | grep -q PONG; then return; fi
  mkdir -p "$STATE/$name"
  {
    echo "bind 127.0.0.1"
    echo "port $port"
    echo 'save ""'
    echo "appendonly no"
    echo "maxmemory 64mb"
    echo "dir $STATE/$name"
    echo "pidfile $STATE/$name/redis.pid"
    echo "logfile $STATE/$name/redis.log"
    echo "daemonize yes"
    if [ -n "$of" ]; then echo "replicaof 127.0.0.1 $of"; fi
  } >"$STATE/$name/redis.conf"
  redis-server "$STATE/$name/redis.conf"
}

start_sentinel() {
  if cli -p "$SENTINEL" PING | grep -q PONG; then return; fi
  mkdir -p "$STATE/sentinel"
  # The sentinel rewrites its file (what it learns), so it is written fresh only when it is not running.
  cat >"$STATE/sentinel/sentinel.conf" <<EOF
bind 127.0.0.1
port $SENTINEL
dir $STATE/sentinel
pidfile $STATE/sentinel/sentinel.pid
logfile $STATE/sentinel/sentinel.log
daemonize yes
sentinel monitor $MASTER_NAME 127.0.0.1 $FIRST 1
sentinel down-after-milliseconds $MASTER_NAME 5000
sentinel failover-timeout $MASTER_NAME 10000
sentinel parallel-syncs $MASTER_NAME 1
EOF
  redis-server "$STATE/sentinel/sentinel.conf" --sentinel
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
    if healthy; then echo "redis-sentinel: already running (sentinel on $SENTINEL)"; exit 0; fi
    start_data first "$FIRST"
    start_data second "$SECOND" "$FIRST"
    start_sentinel
    for _ in $(seq 300); do
      if healthy; then echo "redis-sentinel: master $MASTER_NAME on $FIRST/$SECOND, sentinel on $SENTINEL"; exit 0; fi
      sleep 0.1
    done
    echo "redis-sentinel: the sentinel on $SENTINEL did not see a master with a replica within 30 s; last log lines:" >&2
    tail -n 20 "$STATE/sentinel/sentinel.log" >&2 || true
    exit 1
    ;;
  stop)
    stop_pid "$STATE/sentinel/sentinel.pid"
    stop_pid "$STATE/second/redis.pid"
    stop_pid "$STATE/first/redis.pid"
    echo "redis-sentinel: stopped"
    ;;
  status)
    if healthy; then
      echo "redis-sentinel: healthy; master $(cli -p "$SENTINEL" SENTINEL get-master-addr-by-name "$MASTER_NAME" | paste -sd: -)"
    else
      echo "redis-sentinel: not running (or no replica seen)"
    fi
    ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
