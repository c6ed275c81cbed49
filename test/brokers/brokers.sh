#!/usr/bin/env bash
# bq test brokers: Kafka (KRaft), ActiveMQ Artemis, an SQS-compatible server (ElasticMQ) and
# Apache Pulsar (standalone), fetched from Maven Central with the poms next to this script and
# run as plain JVMs.
#
#   test/brokers/brokers.sh start [name...]   fetch if needed, start, wait until healthy
#   test/brokers/brokers.sh stop [name...]    TERM, then KILL after a grace period
#   test/brokers/brokers.sh status [name...]  process and health of each broker
#   test/brokers/brokers.sh env [name...]     shell exports for the integration tests
#   test/brokers/brokers.sh logs <name>       last lines of a broker's log
#   test/brokers/brokers.sh clean [name...]   stop, then delete data/config/logs (keeps fetched files)
#
# No name means every broker. Runtime files live in ${BQ_BROKERS_HOME:-~/.cache/bq-test-brokers};
# downloaded jars stay in the user's Maven repository (~/.m2), so only the first start downloads.
# BQ_BROKERS_HOME plus the BQ_BROKERS_<NAME>_PORT variables below run a second instance beside the first.
#
# Adding a broker (e.g. pulsar): create test/brokers/<name>/pom.xml, append the name to BROKERS,
# and define the <name>_* hooks below (version, ports, fetch, prepare, command, probe, health, env).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$HERE/../.." && pwd)
BROKERS=(kafka artemis sqs pulsar)

START_TIMEOUT=${BQ_BROKERS_START_TIMEOUT:-180}   # seconds until a started broker must be healthy
PARALLEL=${BQ_BROKERS_PARALLEL:-1}               # 1: start several brokers at once; 0: one after another
STOP_GRACE=${BQ_BROKERS_STOP_GRACE:-30}          # seconds between TERM and KILL
MVN=${MVN:-mvn}
# Extra Maven arguments, e.g. BQ_BROKERS_MVN_ARGS="-Dmaven.repo.local=/elsewhere".
read -r -a MVN_EXTRA <<<"${BQ_BROKERS_MVN_ARGS:-}"
if [[ -n "${JAVA_HOME:-}" ]]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi

HOST=127.0.0.1
# Ports and heaps can be set from the environment (BQ_BROKERS_<NAME>), so a test can run a second,
# private instance next to the shared one: its own BQ_BROKERS_HOME, its own ports (see
# test/support/own-broker.ts). Unset, they are the shared instances' values below.
KAFKA_PORT=${BQ_BROKERS_KAFKA_PORT:-19092}
KAFKA_CONTROLLER_PORT=${BQ_BROKERS_KAFKA_CONTROLLER_PORT:-19093}
# A second listener for the fault tests: it advertises 19095, where the test's fault proxy listens
# and forwards to 19094, so every connection a client makes after the metadata goes through it.
KAFKA_FAULT_PORT=${BQ_BROKERS_KAFKA_FAULT_PORT:-19094}
KAFKA_FAULT_PROXY_PORT=${BQ_BROKERS_KAFKA_FAULT_PROXY_PORT:-19095}
read -r -a KAFKA_HEAP <<<"${BQ_BROKERS_KAFKA_HEAP:--Xms128m -Xmx512m}"
ARTEMIS_PORT=${BQ_BROKERS_ARTEMIS_PORT:-5673}
ARTEMIS_USER=bq
ARTEMIS_PASSWORD=bq
ARTEMIS_HEAP_MAX=${BQ_BROKERS_ARTEMIS_HEAP_MAX:-384M}
ARTEMIS_HEAP_MIN=64M
SQS_PORT=9324             # fixed: test/brokers/sqs/elasticmq.conf names it too
SQS_REGION=us-east-1
SQS_HEAP=(-Xms32m -Xmx1g)   # ElasticMQ keeps every message in its heap; 256m ran out in a 20,000-message SIGKILL trial series
PULSAR_PORT=${BQ_BROKERS_PULSAR_PORT:-6650}          # binary protocol (not used by bq, which speaks WebSocket + REST)
PULSAR_WEB_PORT=${BQ_BROKERS_PULSAR_WEB_PORT:-8080}  # admin REST API and WebSocket API
read -r -a PULSAR_HEAP <<<"${BQ_BROKERS_PULSAR_HEAP:--Xms128m -Xmx512m -XX:MaxDirectMemorySize=256m}"
# Small, quick JVMs for the command line tools used by the health checks.
TOOL_JVM=(-Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1)
# The brokers compile with C1 only: a test run is short bursts on a 2-core machine, where C2's
# compiles cost more CPU than they save. Measured on a private Pulsar: start 14-18 -> 9-10 CPU s;
# 15,000 published and peeked 23-24 -> 12-14 CPU s, and quicker (19 s -> 14-16 s).
SERVER_JVM=(-XX:+UseSerialGC -XX:TieredStopAtLevel=1)

# Leftover JVM settings from the caller's environment would leak into the brokers.
unset JAVA_ARGS JAVA_ARGS_APPEND JAVA_TOOL_OPTIONS _JAVA_OPTIONS

say() { printf 'brokers: %s\n' "$*"; }
die() { printf 'brokers: error: %s\n' "$*" >&2; exit 1; }
warn() { printf 'brokers: warning: %s\n' "$*" >&2; }

resolve_state_dir() {
  local raw=${BQ_BROKERS_HOME:-$HOME/.cache/bq-test-brokers} repo
  STATE=$(realpath -m -- "$raw")
  repo=$(realpath -- "$REPO_ROOT")
  case "$STATE/" in
    "$repo"/*) die "BQ_BROKERS_HOME ($STATE) is inside the repository; choose a directory outside $repo" ;;
  esac
  mkdir -p "$STATE" || die "cannot create state dir $STATE"
}

now_ms() { date +%s%3N; }
elapsed() { local ms=$(($(now_ms) - $1)); printf '%d.%01ds' $((ms / 1000)) $((ms % 1000 / 100)); }

# True when something accepts TCP connections on host:port.
# shellcheck disable=SC2016 # expanded by the child shell, not here
port_open() { timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null; }

pom_property() { # <name> <property>: a pinned version, read from the broker's pom
  sed -n "s:.*<$2>\(.*\)</$2>.*:\1:p" "$HERE/$1/pom.xml" | head -n 1
}

known() {
  local b
  for b in "${BROKERS[@]}"; do
    if [[ $b == "$1" ]]; then return 0; fi
  done
  return 1
}

dir_of() { printf '%s/%s' "$STATE" "$1"; }
pidfile_of() { printf '%s/%s/%s.pid' "$STATE" "$1" "$1"; }
log_of() { printf '%s/%s/%s.log' "$STATE" "$1" "$1"; }

# PID of the broker if its process is alive and really is that broker (guards against reused PIDs).
broker_pid() {
  local pidfile pid
  pidfile=$(pidfile_of "$1")
  [[ -f $pidfile ]] || return 1
  pid=$(<"$pidfile")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [[ -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "-Dbq.test.broker=$1 " || return 1
  printf '%s\n' "$pid"
}

print_log_tail() {
  local log
  log=$(log_of "$1")
  if [[ -s $log ]]; then
    printf -- '----- last 40 lines of %s -----\n' "$log" >&2
    tail -n 40 "$log" >&2
    printf -- '----- end of log -----\n' >&2
  else
    printf -- '(%s is empty)\n' "$log" >&2
  fi
}

check_java() {
  command -v "$JAVA" >/dev/null 2>&1 || die "java not found (install a JDK 17+ or set JAVA_HOME)"
  local v major
  v=$("$JAVA" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1)
  major=${v%%.*}
  [[ $major =~ ^[0-9]+$ && $major -ge 17 ]] || die "Java 17 or newer is required (found '${v:-unknown}' at $JAVA)"
}

check_tools() {
  local t
  for t in curl setsid flock timeout sha256sum; do
    command -v "$t" >/dev/null 2>&1 || die "required command '$t' not found"
  done
}

# ---------------------------------------------------------------------------------------------
# Fetching with Maven. A stamp (hash of the pom) makes a later start skip Maven altogether;
# when Maven must run it tries offline first, so a warm ~/.m2 means no network at all.

fetch_stamp() { { sha256sum <"$HERE/$1/pom.xml"; printf 'layout=1 goal=%s\n' "$2"; } | sha256sum | cut -d' ' -f1; }

run_mvn() { # <name> <mvn args...>
  local name=$1 log
  shift
  log="$(dir_of "$name")/fetch.log"
  command -v "$MVN" >/dev/null 2>&1 || die "mvn not found (install Maven 3.8+ or set MVN)"
  if "$MVN" -B -q -o -f "$HERE/$name/pom.xml" -Dbq.state="$STATE" "${MVN_EXTRA[@]}" "$@" >"$log" 2>&1; then
    return 0
  fi
  say "$name: downloading from Maven Central (first run; cached in the local Maven repository)"
  if "$MVN" -B -q -f "$HERE/$name/pom.xml" -Dbq.state="$STATE" "${MVN_EXTRA[@]}" "$@" >"$log" 2>&1; then
    return 0
  fi
  tail -n 30 "$log" >&2
  die "$name: Maven could not fetch the pinned artifacts (full output: $log)"
}

# Copies the pom's runtime dependency closure into <state>/<name>/lib.
fetch_classpath() {
  local name=$1 dir lib stamp
  dir=$(dir_of "$name")
  lib="$dir/lib"
  stamp=$(fetch_stamp "$name" copy-dependencies)
  [[ -f $lib/.bq-stamp && $(<"$lib/.bq-stamp") == "$stamp" ]] && return 0
  rm -rf "$lib.tmp"
  run_mvn "$name" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$lib.tmp"
  compgen -G "$lib.tmp/*.jar" >/dev/null || die "$name: Maven produced no jars in $lib.tmp"
  printf '%s\n' "$stamp" >"$lib.tmp/.bq-stamp"
  rm -rf "$lib"
  mv "$lib.tmp" "$lib"
}

# ---------------------------------------------------------------------------------------------
# Kafka: KRaft mode, one process acting as broker and controller.

kafka_version() { pom_property kafka kafka.version; }
kafka_ports() { echo "$KAFKA_PORT $KAFKA_CONTROLLER_PORT $KAFKA_FAULT_PORT"; }
kafka_fetch() { fetch_classpath kafka; }
kafka_cp() { printf '%s/lib/*' "$(dir_of kafka)"; }

kafka_prepare() {
  local dir conf data out cluster_id
  dir=$(dir_of kafka)
  conf="$dir/config"
  data="$dir/data"
  mkdir -p "$conf"
  cat >"$conf/server.properties" <<EOF
# Written by test/brokers/brokers.sh; rewritten on every start.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://$HOST:$KAFKA_PORT,CONTROLLER://$HOST:$KAFKA_CONTROLLER_PORT,FAULT://$HOST:$KAFKA_FAULT_PORT
advertised.listeners=PLAINTEXT://$HOST:$KAFKA_PORT,FAULT://$HOST:$KAFKA_FAULT_PROXY_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,FAULT:PLAINTEXT
log.dirs=$data
# Single node: every internal topic has one replica and one partition.
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
share.coordinator.state.topic.num.partitions=1
auto.create.topics.enable=true
group.initial.rebalance.delay.ms=0
# Few threads: test machines have two cores and run three brokers.
num.network.threads=2
num.io.threads=2
num.recovery.threads.per.data.dir=1
background.threads=2
EOF
  cat >"$conf/log4j2.properties" <<'EOF'
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.out.ref = out
logger.state.name = state.change.logger
logger.state.level = warn
logger.request.name = kafka.request.logger
logger.request.level = warn
EOF
  cat >"$conf/tools-log4j2.properties" <<'EOF'
status = error
appender.err.type = Console
appender.err.name = err
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = %p %m%n
rootLogger.level = warn
rootLogger.appenderRef.err.ref = err
EOF
  [[ -f $data/meta.properties ]] && return 0
  # First start: format the KRaft metadata log, as the distribution's kafka-storage.sh would.
  cluster_id=$(kafka_tool kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1)
  [[ $cluster_id =~ ^[A-Za-z0-9_-]{22}$ ]] || die "kafka: StorageTool random-uuid returned '${cluster_id}'"
  if ! out=$(kafka_tool kafka.tools.StorageTool format -t "$cluster_id" -c "$conf/server.properties" 2>&1); then
    printf '%s\n' "$out" >&2
    die "kafka: formatting the storage directory $data failed"
  fi
}

kafka_tool() { # <main class> <args...>: a Kafka command line tool, as the bin/*.sh scripts run it
  "$JAVA" "${TOOL_JVM[@]}" -Dlog4j2.configurationFile="$(dir_of kafka)/config/tools-log4j2.properties" \
    -cp "$(kafka_cp)" "$@"
}

kafka_command() {
  local dir
  dir=$(dir_of kafka)
  CMD=("$JAVA" "${KAFKA_HEAP[@]}" "${SERVER_JVM[@]}" -Djava.awt.headless=true
    -Dlog4j2.configurationFile="$dir/config/log4j2.properties" -Dkafka.logs.dir="$dir/logs"
    -Dbq.test.broker=kafka -cp "$(kafka_cp)" kafka.Kafka "$dir/config/server.properties")
}

kafka_probe() { port_open "$HOST" "$KAFKA_PORT"; }

kafka_health() { # an ApiVersions + metadata round trip with Kafka's own kafka-broker-api-versions tool
  local out
  out=$(timeout 30 "$JAVA" "${TOOL_JVM[@]}" \
    -Dlog4j2.configurationFile="$(dir_of kafka)/config/tools-log4j2.properties" -cp "$(kafka_cp)" \
    org.apache.kafka.tools.BrokerApiVersionsCommand --bootstrap-server "$HOST:$KAFKA_PORT" 2>&1) || return 1
  grep -q "^$HOST:$KAFKA_PORT (id: 1" <<<"$out"
}

kafka_env() {
  echo "BQ_TEST_KAFKA_URL=kafka://$HOST:$KAFKA_PORT"
  echo "BQ_TEST_KAFKA_FAULT=$HOST:$KAFKA_FAULT_PORT:$KAFKA_FAULT_PROXY_PORT"
}

# ---------------------------------------------------------------------------------------------
# ActiveMQ Artemis: the binary distribution, one broker instance made with `artemis create`.

artemis_version() { pom_property artemis artemis.version; }
artemis_ports() { echo "$ARTEMIS_PORT"; }
artemis_home() { printf '%s/dist/apache-artemis-%s' "$(dir_of artemis)" "$(artemis_version)"; }
artemis_instance() { printf '%s/instance' "$(dir_of artemis)"; }

artemis_fetch() {
  local dir stamp marker
  dir=$(dir_of artemis)
  stamp=$(fetch_stamp artemis unpack)
  marker="$dir/dist/.bq-stamp"
  [[ -f $marker && $(<"$marker") == "$stamp" && -x $(artemis_home)/bin/artemis ]] && return 0
  rm -rf "$dir/dist" "$dir/maven-markers"
  run_mvn artemis dependency:unpack
  [[ -x $(artemis_home)/bin/artemis ]] || die "artemis: $(artemis_home)/bin/artemis missing after unpack"
  printf '%s\n' "$stamp" >"$marker"
}

# Options for `artemis create`. The one acceptor (the instance's main 'artemis' acceptor) listens on
# 127.0.0.1:5673 and speaks AMQP and CORE (plus Artemis' other protocols); the protocol-specific
# acceptors are off because their default ports (5672 AMQP, 1883 MQTT) are taken here.
artemis_create_args() {
  ARGS=(--silent --name bq-test --user "$ARTEMIS_USER" --password "$ARTEMIS_PASSWORD" --require-login
    --host "$HOST" --default-port "$ARTEMIS_PORT"
    --no-amqp-acceptor --no-mqtt-acceptor --no-stomp-acceptor --no-hornetq-acceptor --no-web
    --java-memory "$ARTEMIS_HEAP_MAX" --java-options=-Dbq.test.broker=artemis --java-options=-XX:TieredStopAtLevel=1
    --java-utility-options=-XX:TieredStopAtLevel=1 --java-utility-options=-XX:+UseSerialGC
    --java-utility-options=-Xmx128m
    --no-fsync --no-autotune)
}

artemis_prepare() {
  local inst stamp profile out
  inst=$(artemis_instance)
  artemis_create_args
  stamp=$(printf '%s\n' "$(artemis_version)" "$ARTEMIS_HEAP_MIN" "${ARGS[@]}" | sha256sum | cut -d' ' -f1)
  [[ -f $inst/.bq-stamp && $(<"$inst/.bq-stamp") == "$stamp" ]] && return 0
  # New or changed settings: make the instance afresh (its data goes with it).
  rm -rf "$inst"
  if ! out=$("$(artemis_home)/bin/artemis" create "${ARGS[@]}" "$inst" </dev/null 2>&1); then
    printf '%s\n' "$out" >&2
    die "artemis: 'artemis create' failed for $inst"
  fi
  # The generated profile pins -Xms512M, which must not exceed -Xmx; start small instead.
  profile="$inst/etc/artemis.profile"
  sed -i "s/-Xms[0-9]*[MmGg]/-Xms$ARTEMIS_HEAP_MIN/" "$profile"
  grep -q -- "-Xms$ARTEMIS_HEAP_MIN " "$profile" || die "artemis: could not set -Xms in $profile"
  grep -q -- "-Dbq.test.broker=artemis" "$profile" || die "artemis: marker option missing from $profile"
  grep -q "tcp://$HOST:$ARTEMIS_PORT" "$inst/etc/broker.xml" || die "artemis: acceptor $HOST:$ARTEMIS_PORT missing from broker.xml"
  printf '%s\n' "$stamp" >"$inst/.bq-stamp"
}

artemis_command() { CMD=("$(artemis_instance)/bin/artemis" run); } # the script execs java itself

artemis_probe() { port_open "$HOST" "$ARTEMIS_PORT"; }

artemis_health() {
  # 1. The acceptor answers an AMQP 1.0 SASL protocol header with its own header.
  local hdr
  # shellcheck disable=SC2016 # expanded by the child shell, not here
  hdr=$(timeout 5 bash -c 'exec 3<>"/dev/tcp/$1/$2"; printf "AMQP\003\001\000\000" >&3; head -c 4 <&3' _ "$HOST" "$ARTEMIS_PORT" 2>/dev/null) || return 1
  [[ $hdr == AMQP ]] || return 1
  # 2. Artemis' own CLI logs in (CORE protocol) and lists the queues.
  timeout 60 "$(artemis_instance)/bin/artemis" queue stat --silent --url "tcp://$HOST:$ARTEMIS_PORT" \
    --user "$ARTEMIS_USER" --password "$ARTEMIS_PASSWORD" </dev/null 2>&1 | grep -q '|DLQ '
}

artemis_env() { echo "BQ_TEST_ARTEMIS_URL=artemis://$ARTEMIS_USER:$ARTEMIS_PASSWORD@$HOST:$ARTEMIS_PORT"; }

# ---------------------------------------------------------------------------------------------
# SQS: ElasticMQ, in memory, configured by test/brokers/sqs/elasticmq.conf.

sqs_version() { pom_property sqs elasticmq.version; }
sqs_ports() { echo "$SQS_PORT"; }
sqs_fetch() { fetch_classpath sqs; }
sqs_prepare() { [[ -r $HERE/sqs/elasticmq.conf ]] || die "sqs: $HERE/sqs/elasticmq.conf is missing"; }

sqs_command() {
  CMD=("$JAVA" "${SQS_HEAP[@]}" "${SERVER_JVM[@]}" -Djava.awt.headless=true
    -Dconfig.file="$HERE/sqs/elasticmq.conf" -Dbq.test.broker=sqs
    -cp "$(dir_of sqs)/lib/*" org.elasticmq.server.Main)
}

sqs_probe() { port_open "$HOST" "$SQS_PORT"; }

sqs_call() { # <action> <json body>: one SQS call in the AWS JSON protocol (what @aws-sdk/client-sqs v3 sends)
  curl -sS --fail --max-time 10 -X POST "http://$HOST:$SQS_PORT/" \
    -H "X-Amz-Target: AmazonSQS.$1" -H 'Content-Type: application/x-amz-json-1.0' --data "$2"
}

sqs_health() { sqs_call ListQueues '{}' 2>/dev/null | grep -q '"QueueUrls"'; }

sqs_env() {
  echo "BQ_TEST_SQS_URL=sqs://$SQS_REGION?endpoint=http://$HOST:$SQS_PORT"
  echo "AWS_ACCESS_KEY_ID=bq-test"
  echo "AWS_SECRET_ACCESS_KEY=bq-test"
  echo "AWS_REGION=$SQS_REGION"
}

# ---------------------------------------------------------------------------------------------
# Pulsar: standalone mode (broker + WebSocket service + one in-process bookie, RocksDB metadata),
# the class the distribution's `bin/pulsar standalone` runs, with a config written here.

pulsar_version() { pom_property pulsar pulsar.version; }
# The in-process bookie takes a free loopback port on its first start and keeps it (its cookie).
pulsar_ports() { echo "$PULSAR_PORT $PULSAR_WEB_PORT"; }
pulsar_fetch() { fetch_classpath pulsar; }

pulsar_prepare() {
  local dir conf
  dir=$(dir_of pulsar)
  conf="$dir/conf"
  mkdir -p "$conf" "$dir/data"
  cat >"$conf/standalone.conf" <<EOF
# Written by test/brokers/brokers.sh; rewritten on every start. Also read by the in-process bookie.
clusterName=standalone
bindAddress=$HOST
advertisedAddress=$HOST
brokerServicePort=$PULSAR_PORT
webServicePort=$PULSAR_WEB_PORT
# The WebSocket API (/ws/v2/...) on the web port: bq's Pulsar adapter speaks it (no native client).
webSocketServiceEnabled=true
# bq sends payloads base64-encoded in JSON text frames; the 1 MiB default frame limit would cap a
# message at about 750 KiB.
webSocketMaxTextFrameSize=8388608
functionsWorkerEnabled=false
transactionCoordinatorEnabled=false
# One bookie: every ledger has one copy.
managedLedgerDefaultEnsembleSize=1
managedLedgerDefaultWriteQuorum=1
managedLedgerDefaultAckQuorum=1
# Tests leave topics idle between steps; an idle topic must keep its messages.
brokerDeleteInactiveTopicsEnabled=false
allowAutoTopicCreationType=non-partitioned
delayedDeliveryEnabled=true
# Idle CPU matters here (a test run keeps this broker up for half an hour beside four others on two
# cores): a 1 s delayed-delivery tick instead of 100 ms, the managed-ledger cache evicted every
# second instead of every 10 ms, and no topic-level policies (their system-topic readers run per
# namespace); bq sets no topic policy and the tests delay by a minute.
delayedDeliveryTickTimeMillis=1000
managedLedgerCacheEvictionIntervalMs=1000
topicLevelPoliciesEnabled=false
systemTopicEnabled=false
# Small pools and caches: test machines have two cores and run several brokers.
numIOThreads=2
numHttpServerThreads=4
numOrderedExecutorThreads=2
numExecutorThreadPoolSize=2
numCacheExecutorThreadPoolSize=1
webSocketNumIoThreads=2
webSocketNumServiceThreads=4
bookkeeperClientNumWorkerThreads=2
bookkeeperClientNumIoThreads=2
managedLedgerNumSchedulerThreads=2
managedLedgerCacheSizeMB=32
loadBalancerEnabled=false
# Bookie (in-process): small caches, no fsync of the journal (the tests kill bq, not the broker).
journalSyncData=false
dbStorage_writeCacheMaxSizeMb=16
dbStorage_readAheadCacheMaxSizeMb=16
dbStorage_rocksDB_blockCacheSize=16777216
httpServerEnabled=false
# Without a listening interface the bookie binds every interface; lo keeps it on loopback.
listeningInterface=lo
allowLoopback=true
EOF
  cat >"$conf/log4j2.properties" <<'EOF'
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c{1})%n
rootLogger.level = info
rootLogger.appenderRef.out.ref = out
logger.bk.name = org.apache.bookkeeper
logger.bk.level = warn
logger.zk.name = org.apache.zookeeper
logger.zk.level = warn
EOF
}

pulsar_command() {
  local dir
  dir=$(dir_of pulsar)
  CMD=("$JAVA" "${PULSAR_HEAP[@]}" "${SERVER_JVM[@]}" -Djava.awt.headless=true
    -Dlog4j2.configurationFile="$dir/conf/log4j2.properties" -Dpulsar.log.dir="$dir/logs"
    -Dbq.test.broker=pulsar -cp "$dir/lib/*" org.apache.pulsar.PulsarStandaloneStarter
    --config "$dir/conf/standalone.conf" --no-functions-worker --no-stream-storage
    --metadata-dir "$dir/data/metadata" --bookkeeper-dir "$dir/data/bookkeeper")
}

pulsar_probe() { port_open "$HOST" "$PULSAR_WEB_PORT"; }

pulsar_health() {
  # The broker's own health check produces and consumes on a heartbeat topic; the namespace check
  # waits for standalone's public/default, which it creates only after the broker is up.
  local base="http://$HOST:$PULSAR_WEB_PORT/admin/v2"
  [[ $(curl -sS --fail --max-time 20 "$base/brokers/health" 2>/dev/null) == ok ]] || return 1
  curl -sS --fail --max-time 10 "$base/namespaces/public" 2>/dev/null | grep -q '"public/default"'
}

pulsar_env() { echo "BQ_TEST_PULSAR_URL=pulsar://$HOST:$PULSAR_PORT?admin=http://$HOST:$PULSAR_WEB_PORT"; }

# ---------------------------------------------------------------------------------------------
# Generic lifecycle.

with_lock() { # <name> <command...>: one start/stop per broker at a time
  local name=$1
  shift
  mkdir -p "$(dir_of "$name")"
  exec 9>"$(dir_of "$name")/.lock"
  flock -w 600 9 || die "$name: another brokers.sh is busy with it (lock $(dir_of "$name")/.lock)"
  "$@"
  exec 9>&-
}

wait_healthy() { # <name> <pid>
  local name=$1 pid=$2 deadline=$(($(now_ms) + START_TIMEOUT * 1000))
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      print_log_tail "$name"
      rm -f "$(pidfile_of "$name")"
      die "$name: the process exited during startup (log: $(log_of "$name"))"
    fi
    if "${name}_probe" && "${name}_health"; then
      return 0
    fi
    if (($(now_ms) > deadline)); then
      print_log_tail "$name"
      stop_one "$name" >/dev/null || true
      die "$name: not healthy after ${START_TIMEOUT}s (stopped it; log: $(log_of "$name"))"
    fi
    sleep 1
  done
}

start_one() {
  local name=$1 pid t0 port dir log pidfile
  dir=$(dir_of "$name")
  log=$(log_of "$name")
  pidfile=$(pidfile_of "$name")
  if pid=$(broker_pid "$name"); then
    if "${name}_probe" && "${name}_health"; then
      say "$name: already running and healthy (pid $pid); nothing to do"
      return 0
    fi
    say "$name: running (pid $pid) but not healthy yet; waiting"
    wait_healthy "$name" "$pid"
    say "$name: healthy (pid $pid)"
    return 0
  fi
  rm -f "$pidfile"
  for port in $("${name}_ports"); do
    if port_open "$HOST" "$port"; then die "$name: port $HOST:$port is already in use by another process"; fi
  done
  t0=$(now_ms)
  "${name}_fetch"
  "${name}_prepare"
  "${name}_command"
  [[ -f $log ]] && mv -f "$log" "$log.prev"
  say "$name: starting $name $("${name}_version") (log: $log)"
  # A new session, so the broker outlives this shell and its job control. Every step execs the
  # next one (subshell -> setsid -> bash -> JVM), so no shell lingers holding the lock on fd 9,
  # and the inner shell writes its own PID just before it becomes the JVM.
  (
    exec 9>&- </dev/null >>"$log" 2>&1
    cd "$dir" || exit 1
    # shellcheck disable=SC2016 # expanded by the child shell, not here
    exec setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$pidfile" "${CMD[@]}"
  ) &
  local tries=0
  until [[ -s $pidfile ]]; do
    if ((++tries > 50)); then die "$name: the launcher did not write $pidfile"; fi
    sleep 0.1
  done
  pid=$(<"$pidfile")
  wait_healthy "$name" "$pid"
  say "$name: healthy on $HOST:$("${name}_ports" | cut -d' ' -f1) after $(elapsed "$t0") (pid $pid)"
}

stop_one() {
  local name=$1 pid waited=0
  if ! pid=$(broker_pid "$name"); then
    rm -f "$(pidfile_of "$name")"
    say "$name: not running"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do
    if ((waited >= STOP_GRACE * 10)); then
      warn "$name: still running ${STOP_GRACE}s after TERM; sending KILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.5
      break
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  rm -f "$(pidfile_of "$name")"
  say "$name: stopped (pid $pid)"
}

status_one() {
  local name=$1 pid rss health
  if pid=$(broker_pid "$name"); then
    rss=$(ps -o rss= -p "$pid" 2>/dev/null | tr -d ' ')
    if "${name}_probe" && "${name}_health"; then health=healthy; else health=UNHEALTHY; fi
    printf '%-8s %-8s %-10s pid %-8s rss %6s MiB  %s:%s\n' "$name" "$("${name}_version")" "$health" \
      "$pid" "$((${rss:-0} / 1024))" "$HOST" "$("${name}_ports" | tr ' ' ',')"
  else
    printf '%-8s %-8s %-10s\n' "$name" "$("${name}_version")" stopped
  fi
}

start_all() {
  local n pids=() failed=()
  if [[ $PARALLEL != 1 || $# -eq 1 ]]; then
    for n in "$@"; do with_lock "$n" start_one "$n"; done
    return 0
  fi
  # Each broker starts in its own subshell; a failure in one does not stop the others.
  for n in "$@"; do
    (with_lock "$n" start_one "$n") &
    pids+=($!)
  done
  local i
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || failed+=("${*:i+1:1}")
  done
  ((${#failed[@]} == 0)) || die "could not start: ${failed[*]}"
}

clean_one() {
  local name=$1
  local dir entry
  dir=$(dir_of "$name")
  stop_one "$name"
  # Keep what was fetched (lib/, dist/) so the next start needs no Maven run; drop the rest.
  for entry in "$dir"/* "$dir"/.[!.]*; do
    [[ -e $entry ]] || continue
    case ${entry##*/} in lib | dist | .lock) ;; *) rm -rf "$entry" ;; esac
  done
  say "$name: removed data, config and logs under $dir (fetched files kept)"
}

env_one() {
  local line
  while IFS= read -r line; do
    printf "export %s='%s'\n" "${line%%=*}" "${line#*=}"
  done < <("${1}_env")
}

usage() {
  cat <<EOF
usage: $(basename "$0") <command> [name...]
  start [name...]    fetch (first time only), start and wait until healthy; no-op if already healthy
  stop [name...]     stop (TERM, then KILL after ${STOP_GRACE}s)
  status [name...]   show whether each broker runs and answers
  env [name...]      print shell exports for the tests: eval "\$($(basename "$0") env)"
  logs <name>        print the last 100 lines of the broker's log
  clean [name...]    stop and delete data, config and logs (fetched files are kept)
brokers: ${BROKERS[*]} (no name = all)
state dir: \${BQ_BROKERS_HOME:-\$HOME/.cache/bq-test-brokers}
EOF
}

main() {
  local cmd=${1:-}
  [[ -n $cmd ]] || { usage >&2; exit 2; }
  shift
  case $cmd in -h | --help | help) usage; exit 0 ;; esac
  local names=("$@") n
  [[ ${#names[@]} -gt 0 && ${names[0]} != all ]] || names=("${BROKERS[@]}")
  for n in "${names[@]}"; do known "$n" || die "unknown broker '$n' (known: ${BROKERS[*]})"; done

  case $cmd in
    env) for n in "${names[@]}"; do env_one "$n"; done; return 0 ;;
  esac
  resolve_state_dir
  case $cmd in
    start)
      check_tools
      check_java
      start_all "${names[@]}"
      ;;
    stop) for n in "${names[@]}"; do with_lock "$n" stop_one "$n"; done ;;
    status) for n in "${names[@]}"; do status_one "$n"; done ;;
    logs)
      [[ $# -eq 1 ]] || die "logs takes exactly one broker name"
      [[ -f $(log_of "$1") ]] || die "$1: no log yet ($(log_of "$1"))"
      tail -n 100 "$(log_of "$1")"
      ;;
    clean) for n in "${names[@]}"; do with_lock "$n" clean_one "$n"; done ;;
    *) usage >&2; die "unknown command '$cmd'" ;;
  esac
}

main "$@"
