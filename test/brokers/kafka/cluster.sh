#!/usr/bin/env bash
# A three-node Kafka cluster for the failover tests (test/brokers/kafka/failover.test.ts): KRaft,
# every node both broker and controller (a quorum of three, so one node down keeps it), topics at
# replication factor 3 with min.insync.replicas=2, small heaps and segments. It reuses the jars
# test/brokers/brokers.sh fetched for the shared Kafka (started first if they are missing).
#
#   test/brokers/kafka/cluster.sh start            start every node not running; wait until all are in the metadata
#   test/brokers/kafka/cluster.sh stop             TERM, then KILL after a grace period
#   test/brokers/kafka/cluster.sh status           each node's process and port; exit 1 unless all are up
#   test/brokers/kafka/cluster.sh kill <n>         SIGKILL node n (1-3), as a crash would; waits until it is gone
#   test/brokers/kafka/cluster.sh restart <n>      start node n again on its data; waits until the cluster lists it
#   test/brokers/kafka/cluster.sh leader <topic> <partition>   the node id leading that partition
#   test/brokers/kafka/cluster.sh bootstrap        host:port,host:port,host:port of the three brokers
#   test/brokers/kafka/cluster.sh clean            stop, then delete the cluster's data
#
# State lives in ${BQ_KAFKA_CLUSTER_HOME:-~/.cache/bq-test-brokers/kafka-cluster}. Broker n listens on
# BQ_KAFKA_CLUSTER_PORT+n (default 19291-19293), its controller on BQ_KAFKA_CLUSTER_PORT+3+n (19294-19296).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$HERE/../../.." && pwd)
HOST=127.0.0.1
BASE_PORT=${BQ_KAFKA_CLUSTER_PORT:-19290}
NODES=(1 2 3)
SHARED_HOME=${BQ_BROKERS_HOME:-$HOME/.cache/bq-test-brokers}
STATE=$(realpath -m -- "${BQ_KAFKA_CLUSTER_HOME:-$SHARED_HOME/kafka-cluster}")
START_TIMEOUT=${BQ_KAFKA_CLUSTER_START_TIMEOUT:-180}
read -r -a HEAP <<<"${BQ_KAFKA_CLUSTER_HEAP:--Xms64m -Xmx256m}"
if [[ -n "${JAVA_HOME:-}" ]]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi
TOOL_JVM=(-Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1)
unset JAVA_ARGS JAVA_ARGS_APPEND JAVA_TOOL_OPTIONS _JAVA_OPTIONS

say() { printf 'kafka-cluster: %s\n' "$*"; }
die() { printf 'kafka-cluster: error: %s\n' "$*" >&2; exit 1; }

case "$STATE/" in "$(realpath -- "$REPO_ROOT")"/*) die "BQ_KAFKA_CLUSTER_HOME ($STATE) is inside the repository" ;; esac

broker_port() { echo $((BASE_PORT + $1)); }
controller_port() { echo $((BASE_PORT + 3 + $1)); }
node_dir() { printf '%s/node%s' "$STATE" "$1"; }
lib() { printf '%s/lib' "$STATE"; }
bootstrap() { local n out=(); for n in "${NODES[@]}"; do out+=("$HOST:$(broker_port "$n")"); done; (IFS=,; echo "${out[*]}"); }
# shellcheck disable=SC2016 # expanded by the child shell
port_open() { timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$HOST" "$1" 2>/dev/null; }

node_pid() { # PID of node n if it runs and really is that node
  local file pid
  file="$(node_dir "$1")/kafka.pid"
  [[ -f $file ]] || return 1
  pid=$(<"$file")
  [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "-Dbq.test.broker=kafka-cluster-$1 " || return 1
  grep -q '^[^)]*) Z ' "/proc/$pid/stat" 2>/dev/null && return 1
  printf '%s\n' "$pid"
}

tool() { "$JAVA" "${TOOL_JVM[@]}" -Dlog4j2.configurationFile="$STATE/tools-log4j2.properties" -cp "$(lib)/*" "$@"; }

# The jars of the shared Kafka (brokers.sh keeps them across `clean`), linked, so no Maven run.
link_jars() {
  [[ -e $(lib)/.bq-stamp ]] && return 0
  local shared="$SHARED_HOME/kafka/lib"
  if [[ ! -e $shared/.bq-stamp ]]; then
    say "fetching the Kafka jars with test/brokers/brokers.sh"
    BQ_BROKERS_HOME=$SHARED_HOME bash "$REPO_ROOT/test/brokers/brokers.sh" start kafka >/dev/null
  fi
  mkdir -p "$STATE"
  ln -sfn "$shared" "$(lib)"
}

write_config() {
  local n=$1 dir voters="" m
  dir=$(node_dir "$n")
  for m in "${NODES[@]}"; do voters+="${voters:+,}$m@$HOST:$(controller_port "$m")"; done
  mkdir -p "$dir"
  cat >"$dir/server.properties" <<CONF
# Written by test/brokers/kafka/cluster.sh; rewritten on every start.
process.roles=broker,controller
node.id=$n
controller.quorum.voters=$voters
listeners=PLAINTEXT://$HOST:$(broker_port "$n"),CONTROLLER://$HOST:$(controller_port "$n")
advertised.listeners=PLAINTEXT://$HOST:$(broker_port "$n")
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
num.partitions=1
default.replication.factor=3
min.insync.replicas=2
offsets.topic.replication.factor=3
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
transaction.state.log.num.partitions=3
share.coordinator.state.topic.replication.factor=3
share.coordinator.state.topic.min.isr=2
share.coordinator.state.topic.num.partitions=1
auto.create.topics.enable=true
group.initial.rebalance.delay.ms=0
# A SIGKILLed node is fenced (its partitions get new leaders) within seconds, not the 9 s default.
broker.session.timeout.ms=3000
broker.heartbeat.interval.ms=500
replica.lag.time.max.ms=5000
controller.quorum.election.timeout.ms=1000
controller.quorum.fetch.timeout.ms=2000
# Leaders move back to their preferred node soon after a restart, so trials start alike.
leader.imbalance.check.interval.seconds=5
# Small logs: the cluster's data is thrown away with its state directory.
log.segment.bytes=8388608
log.retention.bytes=268435456
offsets.topic.segment.bytes=8388608
log.cleaner.dedupe.buffer.size=2097152
log.cleaner.threads=1
# Few threads: a 2-core test machine runs the shared brokers too.
num.network.threads=2
num.io.threads=2
num.replica.fetchers=1
num.recovery.threads.per.data.dir=1
background.threads=2
CONF
  cat >"$dir/log4j2.properties" <<'CONF'
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.out.ref = out
CONF
}

write_tools_config() {
  cat >"$STATE/tools-log4j2.properties" <<'CONF'
status = error
appender.err.type = Console
appender.err.name = err
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = %p %m%n
rootLogger.level = error
rootLogger.appenderRef.err.ref = err
CONF
}

format_node() { # first start only: one cluster id for all three nodes
  local n=$1 dir out
  dir=$(node_dir "$n")
  [[ -f $dir/data/meta.properties ]] && return 0
  if [[ ! -f $STATE/cluster-id ]]; then
    tool kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1 >"$STATE/cluster-id"
  fi
  if ! out=$(tool kafka.tools.StorageTool format -t "$(<"$STATE/cluster-id")" -c "$dir/server.properties" 2>&1); then
    printf '%s\n' "$out" >&2
    die "formatting node $n failed"
  fi
}

launch() { # starts node n in a session of its own (so a kill takes its whole process group)
  local n=$1 dir
  dir=$(node_dir "$n")
  node_pid "$n" >/dev/null && return 0
  port_open "$(broker_port "$n")" && die "port $(broker_port "$n") is taken by another process"
  write_config "$n"
  format_node "$n"
  setsid "$JAVA" "${HEAP[@]}" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$dir/log4j2.properties" -Dkafka.logs.dir="$dir/logs" \
    -Dbq.test.broker="kafka-cluster-$n" -cp "$(lib)/*" kafka.Kafka "$dir/server.properties" \
    >>"$dir/kafka.log" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$dir/kafka.pid"
  # Until setsid has exec'd java, the pid's command line is still this shell's, and node_pid takes
  # the node for dead (3 times in 200 starts of a JVM this way, on an idle machine). Fresh-clone
  # runs 11 and 14 met it as a restarted node that "died" with nothing new in its log.
  for _ in $(seq 100); do
    node_pid "$n" >/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
}

# Node ids the cluster's metadata lists (unfenced brokers), as node n answers.
listed_by() {
  local n=$1 out
  node_pid "$n" >/dev/null || return 1
  out=$(timeout 30 "$JAVA" "${TOOL_JVM[@]}" -Dlog4j2.configurationFile="$STATE/tools-log4j2.properties" -cp "$(lib)/*" \
    org.apache.kafka.tools.BrokerApiVersionsCommand --bootstrap-server "$HOST:$(broker_port "$n")" 2>/dev/null) || return 1
  sed -n 's/^.* (id: \([0-9]*\) rack.*$/\1/p' <<<"$out" | sort -n | tr '\n' ' '
}

# Node ids the cluster's metadata lists, as the first node that answers says.
listed_nodes() {
  local n
  for n in "${NODES[@]}"; do listed_by "$n" && return 0; done
  return 1
}

# Until node n itself answers and lists itself. A node that survived the loss of the other two
# (no controller quorum) still lists them all, fenced by nobody, before they listen again: the
# cluster's word alone let a rerun start against two ports that refused connections.
wait_answers() {
  local n=$1 deadline=$((SECONDS + START_TIMEOUT))
  until [[ " $(listed_by "$n" || true) " == *" $n "* ]]; do
    node_pid "$n" >/dev/null || { tail -n 30 "$(node_dir "$n")/kafka.log" >&2; die "node $n exited while starting"; }
    ((SECONDS < deadline)) || die "node $n did not answer within ${START_TIMEOUT}s"
    sleep 1
  done
}

wait_listed() { # <node...>: until the metadata lists every one of them
  local deadline=$((SECONDS + START_TIMEOUT)) listed n missing
  while :; do
    listed=" $(listed_nodes || true) "
    missing=""
    for n in "$@"; do [[ $listed == *" $n "* ]] || missing+=" $n"; done
    [[ -z $missing ]] && return 0
    for n in "$@"; do node_pid "$n" >/dev/null || { tail -n 30 "$(node_dir "$n")/kafka.log" >&2; die "node $n exited while starting"; }; done
    ((SECONDS < deadline)) || die "node(s)$missing not in the cluster metadata within ${START_TIMEOUT}s"
    sleep 1
  done
}

check_node() { [[ $1 =~ ^[1-3]$ ]] || die "node must be 1, 2 or 3, got '${1:-}'"; }

cmd_start() {
  local n started=()
  link_jars
  write_tools_config
  for n in "${NODES[@]}"; do node_pid "$n" >/dev/null || started+=("$n"); done
  # First start: the three formats at once (each is a JVM of its own).
  if [[ ! -f $STATE/cluster-id ]]; then
    mkdir -p "$STATE"
    tool kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1 >"$STATE/cluster-id"
  fi
  local pids=()
  for n in "${started[@]}"; do { write_config "$n" && format_node "$n"; } & pids+=($!); done
  for n in "${pids[@]}"; do wait "$n" || die "formatting a node failed"; done
  for n in "${started[@]}"; do launch "$n"; done
  if ((${#started[@]} == 0)) && [[ $(listed_nodes || true) == "1 2 3 " ]]; then say "already running ($(bootstrap))"; return 0; fi
  local t0=$SECONDS
  wait_listed "${NODES[@]}"
  say "running ($(bootstrap)) after $((SECONDS - t0))s"
}

cmd_kill() {
  local n=$1 pid
  check_node "$n"
  pid=$(node_pid "$n") || { say "node $n is not running"; return 0; }
  kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid"
  for _ in $(seq 150); do node_pid "$n" >/dev/null || { say "node $n killed"; return 0; }; sleep 0.1; done
  die "node $n (pid $pid) still alive 15 s after SIGKILL"
}

cmd_restart() {
  local n=$1
  check_node "$n"
  write_tools_config
  launch "$n"
  wait_answers "$n"
  wait_listed "$n"
  say "node $n running"
}

cmd_stop() {
  local n pid pids=()
  for n in "${NODES[@]}"; do pid=$(node_pid "$n") && { kill -TERM -- "-$pid" 2>/dev/null || true; pids+=("$n"); }; done
  for _ in $(seq 300); do
    local alive=0
    for n in "${pids[@]}"; do node_pid "$n" >/dev/null && alive=1; done
    ((alive == 0)) && { say "stopped"; return 0; }
    sleep 0.1
  done
  for n in "${pids[@]}"; do cmd_kill "$n"; done
  say "stopped (killed after 30 s)"
}

cmd_status() {
  local n pid ok=0
  for n in "${NODES[@]}"; do
    if pid=$(node_pid "$n"); then
      printf 'node %s  pid %s  %s:%s\n' "$n" "$pid" "$HOST" "$(broker_port "$n")"
    else
      printf 'node %s  down\n' "$n"
      ok=1
    fi
  done
  return $ok
}

cmd_leader() {
  local topic=$1 partition=$2 n out
  for n in "${NODES[@]}"; do
    node_pid "$n" >/dev/null || continue
    out=$(tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$HOST:$(broker_port "$n")" --describe --topic "$topic" 2>/dev/null) || continue
    awk -v p="$partition" '$0 ~ "Partition: " p "[ \t]" { for (i = 1; i <= NF; i++) if ($i == "Leader:") { print $(i + 1); exit } }' <<<"$out"
    return 0
  done
  die "no node answered"
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  kill) cmd_kill "${2:-}" ;;
  restart) cmd_restart "${2:-}" ;;
  leader) [[ $# -eq 3 ]] || die "usage: $0 leader <topic> <partition>"; cmd_leader "$2" "$3" ;;
  bootstrap) bootstrap ;;
  clean) cmd_stop; rm -rf -- "$STATE"; say "deleted $STATE" ;;
  *) echo "usage: $0 start|stop|status|kill <n>|restart <n>|leader <topic> <partition>|bootstrap|clean" >&2; exit 2 ;;
esac
