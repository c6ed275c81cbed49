#!/usr/bin/env bash
# TLS-only Redis servers with ACL users, for test/brokers/redis/tls.test.ts:
#
#   main        tls port BQ_REDIS_TLS_PORT (7201), client certificates optional
#   clientauth  7202: a client certificate is required (--tls-auth-clients yes)
#   expired     7203: serves the expired certificate
#   wronghost   7204: serves a certificate for wrong-host.invalid only
#
# None listens in plaintext (--port 0). Certificates come from test/support/make-certs.sh in
# $BQ_TEST_CERTS_DIR (default /tmp/bq-test-certs), the directory test/support/certs.ts uses too.
# Users (the same on every server; the `default` user is off, so no password means NOAUTH):
#   bq       bq-test-secret       everything
#   limited  limited-test-secret  only the commands bq needs (-@all +@read +@write +eval +evalsha +info),
#                                 writes only keys bqtest-rw-*, reads every key
#   reader   reader-test-secret   -@all +@read +info: peek, inspect, count and list, nothing else
#
#   test/brokers/redis/tls.sh start|stop|status
# start is idempotent: servers already answering are left alone. State: ${BQ_REDIS_TLS_HOME:-/tmp/bq-redis-tls}.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$HERE/../../.." && pwd)
STATE=${BQ_REDIS_TLS_HOME:-/tmp/bq-redis-tls}
CERTS=${BQ_TEST_CERTS_DIR:-/tmp/bq-test-certs}
BASE_PORT=${BQ_REDIS_TLS_PORT:-7201}
# name port certificate client-auth
SERVERS=(
  "main $BASE_PORT server optional"
  "clientauth $((BASE_PORT + 1)) server yes"
  "expired $((BASE_PORT + 2)) expired optional"
  "wronghost $((BASE_PORT + 3)) wronghost optional"
)

# Answers PING over TLS as the full user: the server is up and its ACL loaded.
healthy() { # <port>
  redis-cli --tls --cacert "$CERTS/ca.pem" --cert "$CERTS/client.pem" --key "$CERTS/client.key" --sni localhost \
    -h 127.0.0.1 -p "$1" --user bq --pass bq-test-secret --no-auth-warning --insecure PING 2>/dev/null | grep -q PONG
}

start_one() { # <name> <port> <cert> <auth-clients>
  local name=$1 port=$2 cert=$3 auth=$4
  if healthy "$port"; then echo "redis-tls: $name already running on $port"; return; fi
  mkdir -p "$STATE/$name"
  cat >"$STATE/$name/redis.conf" <<EOF
bind 127.0.0.1
port 0
tls-port $port
tls-cert-file $CERTS/$cert.pem
tls-key-file $CERTS/$cert.key
tls-ca-cert-file $CERTS/ca.pem
tls-auth-clients $auth
save ""
appendonly no
maxmemory 64mb
dir $STATE/$name
pidfile $STATE/$name/redis.pid
logfile $STATE/$name/redis.log
daemonize yes
user default off
user bq on >bq-test-secret ~* &* +@all
user limited on >limited-test-secret resetkeys %R~* ~bqtest-rw-* -@all +@read +@write +eval +evalsha +info
user reader on >reader-test-secret ~* -@all +@read +info
EOF
  redis-server "$STATE/$name/redis.conf"
  for _ in $(seq 50); do
    healthy "$port" && { echo "redis-tls: started $name on $port"; return; }
    sleep 0.1
  done
  echo "redis-tls: $name did not answer on $port; last log lines:" >&2
  tail -n 20 "$STATE/$name/redis.log" >&2 || true
  exit 1
}

stop_one() { # <name>
  local pidfile="$STATE/$1/redis.pid"
  [ -f "$pidfile" ] || return 0
  local pid
  pid=$(cat "$pidfile")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    echo "redis-tls: stopped $1"
  fi
  rm -f "$pidfile"
}

case "${1:-}" in
  start)
    command -v redis-server >/dev/null || { echo "redis-tls: redis-server is not installed (apt-get install redis-server)" >&2; exit 1; }
    bash "$REPO_ROOT/test/support/make-certs.sh" "$CERTS"
    for server in "${SERVERS[@]}"; do
      # shellcheck disable=SC2086 # name port cert auth
      start_one $server
    done
    ;;
  stop)
    for server in "${SERVERS[@]}"; do stop_one "${server%% *}"; done
    ;;
  status)
    for server in "${SERVERS[@]}"; do
      read -r name port _ <<<"$server"
      if healthy "$port"; then echo "redis-tls: $name on $port healthy"; else echo "redis-tls: $name on $port not running"; fi
    done
    ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
