#!/usr/bin/env bash
# A local Redis Cluster for the cluster tests: 6 redis-server processes on FIRST..FIRST+5
# (default 7101..7106), 3 masters + 3 replicas, no persistence, state under
# /tmp/bq-redis-cluster/FIRST. Idempotent: `start` returns at once when the cluster is healthy.
# A node that was stopped (a failover test kills one) is started again from its nodes.conf, so it
# rejoins the cluster (as a replica once its replica took over).
# Usage: test/brokers/redis/cluster.sh start|stop|status [FIRST]
set -euo pipefail

first="${2:-7101}"
state="/tmp/bq-redis-cluster/$first"
ports=()
for i in 0 1 2 3 4 5; do ports+=("$((first + i))"); done

cli() { redis-cli -h 127.0.0.1 -p "$1" "${@:2}"; }
alive() { [ "$(cli "$1" ping 2>/dev/null)" = PONG ]; }
cluster_ok() { cli "$1" cluster info 2>/dev/null | tr -d '\r' | grep -q '^cluster_state:ok'; }

healthy() {
  for p in "${ports[@]}"; do alive "$p" && cluster_ok "$p" || return 1; done
  # Every node must also see 3 masters, each with a replica (a node just restarted may not yet).
  [ "$(cli "${ports[0]}" cluster nodes 2>/dev/null | grep -c 'master' | tr -d ' ')" -ge 3 ] &&
    [ "$(cli "${ports[0]}" cluster nodes 2>/dev/null | grep -v fail | grep -c 'slave' | tr -d ' ')" -ge 3 ]
}

start_node() {
  local p=$1 dir="$state/$1"
  mkdir -p "$dir"
  alive "$p" && return 0
  redis-server --port "$p" --bind 127.0.0.1 --daemonize yes --dir "$dir" \
    --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" \
    --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 1000 \
    --save "" --appendonly no --repl-diskless-sync yes --repl-diskless-sync-delay 0 \
    --maxmemory 64mb
}

wait_for() { # <seconds> <command...>
  local until=$((SECONDS + $1))
  while ! "${@:2}"; do
    [ "$SECONDS" -lt "$until" ] || return 1
    sleep 0.2
  done
}

start() {
  command -v redis-server >/dev/null || { echo "redis cluster: redis-server is not installed" >&2; exit 1; }
  if healthy; then echo "redis cluster: already running on ${ports[0]}-${ports[5]}"; return 0; fi
  for p in "${ports[@]}"; do start_node "$p"; done
  for p in "${ports[@]}"; do wait_for 10 alive "$p" || { echo "redis cluster: node $p did not start (see $state/$p/redis.log)" >&2; exit 1; }; done
  # A fresh set of nodes (no slots assigned anywhere) is made into a cluster; otherwise the nodes
  # found their cluster again from nodes.conf.
  if [ "$(cli "${ports[0]}" cluster info | tr -d '\r' | grep '^cluster_slots_assigned:' | cut -d: -f2)" = 0 ]; then
    redis-cli --cluster create $(printf '127.0.0.1:%s ' "${ports[@]}") --cluster-replicas 1 --cluster-yes >"$state/create.log" 2>&1 ||
      { echo "redis cluster: create failed (see $state/create.log)" >&2; exit 1; }
  fi
  wait_for 30 healthy || { echo "redis cluster: not healthy within 30 s" >&2; exit 1; }
  echo "redis cluster: started on ${ports[0]}-${ports[5]}"
}

stop() {
  for p in "${ports[@]}"; do
    if [ -f "$state/$p/redis.pid" ]; then kill "$(cat "$state/$p/redis.pid")" 2>/dev/null || true; fi
  done
  for p in "${ports[@]}"; do wait_for 10 bash -c "! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null" || true; done
  rm -rf "$state"
  echo "redis cluster: stopped ${ports[0]}-${ports[5]}"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status)
    for p in "${ports[@]}"; do
      if alive "$p"; then echo "127.0.0.1:$p $(cli "$p" cluster info | tr -d '\r' | grep '^cluster_state:') $(cli "$p" role | head -1)"; else echo "127.0.0.1:$p down"; fi
    done
    healthy
    ;;
  *) echo "usage: $0 start|stop|status [FIRST-PORT]" >&2; exit 2 ;;
esac
