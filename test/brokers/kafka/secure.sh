#!/usr/bin/env bash
# A second, secured Kafka for the authentication tests (test/brokers/kafka/secure.test.ts):
# KRaft, one node, small heap, the jars test/brokers/brokers.sh fetched for the shared Kafka.
#
#   127.0.0.1:19190  SASL_SSL, SCRAM-SHA-512 (a client certificate is requested, not required)
#   127.0.0.1:19191  SSL with a client certificate required (the principal is the certificate's CN)
#   127.0.0.1:19192  the controller (plaintext, loopback; its only user is the node itself)
#
# The server key, CA and trust store come from test/support/make-certs.sh ($BQ_TEST_CERTS_DIR,
# default /tmp/bq-test-certs). The StandardAuthorizer denies what no ACL allows. Users:
#   admin / bq-admin-pw-7c41     super user (SCRAM)
#   client                       super user (the CN of the test client certificate, on 19191)
#   limited / bq-limited-pw-93ae  the ACLs bq's commands need on topics bqsec-lim-* (and their
#                                redrive and lock groups), Read and Describe only on bqsec-ro-*
#
#   test/brokers/kafka/secure.sh start|stop|status
#
# start is idempotent (returns at once when the broker already answers). State lives in
# ${BQ_KAFKA_SECURE_HOME:-~/.cache/bq-test-brokers/kafka-secure}.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$HERE/../../.." && pwd)
HOST=127.0.0.1
SASL_PORT=${BQ_KAFKA_SECURE_PORT:-19190}
MTLS_PORT=${BQ_KAFKA_SECURE_MTLS_PORT:-19191}
CONTROLLER_PORT=${BQ_KAFKA_SECURE_CONTROLLER_PORT:-19192}
STATE=${BQ_KAFKA_SECURE_HOME:-$HOME/.cache/bq-test-brokers/kafka-secure}
SHARED_LIB=${BQ_BROKERS_HOME:-$HOME/.cache/bq-test-brokers}/kafka/lib
CERTS=${BQ_TEST_CERTS_DIR:-${TMPDIR:-/tmp}/bq-test-certs}
STORE_PASSWORD=bqtest
ADMIN_PASSWORD=bq-admin-pw-7c41
LIMITED_PASSWORD=bq-limited-pw-93ae
START_TIMEOUT=${BQ_BROKERS_START_TIMEOUT:-180}
if [[ -n "${JAVA_HOME:-}" ]]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi
TOOL_JVM=(-Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1)
unset JAVA_ARGS JAVA_ARGS_APPEND JAVA_TOOL_OPTIONS _JAVA_OPTIONS

say() { printf 'kafka-secure: %s\n' "$*"; }
die() { printf 'kafka-secure: error: %s\n' "$*" >&2; exit 1; }
# shellcheck disable=SC2016 # expanded by the child shell
port_open() { timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$HOST" "$1" 2>/dev/null; }

LIB="$STATE/lib"
CONF="$STATE/config"
PIDFILE="$STATE/kafka-secure.pid"
LOG="$STATE/kafka-secure.log"

case "$STATE/" in "$REPO_ROOT"/*) die "BQ_KAFKA_SECURE_HOME ($STATE) is inside the repository" ;; esac

# The broker's pid: the pid file's when that process bears the marker, else any process that does
# (a pid file left by a machine that stopped must not hide a running broker from stop and reset).
broker_pid() {
  local pid=
  [[ -f $PIDFILE ]] && pid=$(<"$PIDFILE")
  if [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- '-Dbq.test.broker=kafka-secure '; then
    printf '%s\n' "$pid"
    return 0
  fi
  pid=$(pgrep -f -- '-Dbq.test.broker=kafka-secure ' | head -n 1) || true
  [[ -n $pid ]] || return 1
  printf '%s\n' "$pid"
}

tool() { # <main class> <args...>
  "$JAVA" "${TOOL_JVM[@]}" -Dlog4j2.configurationFile="$CONF/tools-log4j2.properties" -cp "$LIB/*" "$@"
}

# The shared Kafka's jars (brokers.sh fetched them); fetched the same way when that never ran here.
ensure_jars() {
  if compgen -G "$SHARED_LIB/kafka-server-*.jar" >/dev/null; then
    ln -sfn "$SHARED_LIB" "$LIB"
    return 0
  fi
  [[ -L $LIB ]] && rm -f "$LIB"
  compgen -G "$LIB/kafka-server-*.jar" >/dev/null && return 0
  say "fetching the Kafka jars with Maven (test/brokers/kafka/pom.xml)"
  mvn -B -q -o -f "$HERE/pom.xml" -Dbq.state="$STATE" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIB" >"$STATE/fetch.log" 2>&1 ||
    mvn -B -q -f "$HERE/pom.xml" -Dbq.state="$STATE" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIB" >"$STATE/fetch.log" 2>&1 ||
    { tail -n 30 "$STATE/fetch.log" >&2; die "Maven could not fetch the Kafka jars"; }
}

write_config() {
  mkdir -p "$CONF"
  local scram="org.apache.kafka.common.security.scram.ScramLoginModule required username=\"admin\" password=\"$ADMIN_PASSWORD\";"
  cat >"$CONF/server.properties" <<EOF
# Written by test/brokers/kafka/secure.sh; rewritten on every start.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$CONTROLLER_PORT
listeners=SASL_SSL://$HOST:$SASL_PORT,SSL://$HOST:$MTLS_PORT,CONTROLLER://$HOST:$CONTROLLER_PORT
advertised.listeners=SASL_SSL://$HOST:$SASL_PORT,SSL://$HOST:$MTLS_PORT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL
inter.broker.listener.name=SASL_SSL
sasl.enabled.mechanisms=SCRAM-SHA-512
sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=$scram
ssl.keystore.type=PKCS12
ssl.keystore.location=$STATE/server.p12
ssl.keystore.password=$STORE_PASSWORD
ssl.key.password=$STORE_PASSWORD
ssl.truststore.type=PKCS12
ssl.truststore.location=$CERTS/truststore.p12
ssl.truststore.password=$STORE_PASSWORD
ssl.endpoint.identification.algorithm=https
listener.name.sasl_ssl.ssl.client.auth=requested
listener.name.ssl.ssl.client.auth=required
# The certificate's subject is "CN=client,O=bq tests": the principal is its CN.
ssl.principal.mapping.rules=RULE:^CN=([^,]+),.*$/\$1/,DEFAULT
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
# ANONYMOUS is the node itself on its loopback controller listener.
super.users=User:admin;User:client;User:ANONYMOUS
log.dirs=$STATE/data
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
auto.create.topics.enable=false
group.initial.rebalance.delay.ms=0
num.network.threads=1
num.io.threads=2
num.recovery.threads.per.data.dir=1
background.threads=2
EOF
  cat >"$CONF/admin.properties" <<EOF
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=$scram
ssl.truststore.type=PKCS12
ssl.truststore.location=$CERTS/truststore.p12
ssl.truststore.password=$STORE_PASSWORD
EOF
  cat >"$CONF/log4j2.properties" <<'EOF'
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
logger.authorizer.name = kafka.authorizer.logger
logger.authorizer.level = warn
EOF
  cat >"$CONF/tools-log4j2.properties" <<'EOF'
status = error
appender.err.type = Console
appender.err.name = err
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = %p %m%n
rootLogger.level = error
rootLogger.appenderRef.err.ref = err
EOF
}

# Kafka checks its key store by a handshake with itself, which, with client certificates
# required, needs a certificate fit for both ends: the test server certificate's key, signed
# again by the test CA with both usages.
make_keystore() {
  [[ -f $STATE/server.p12 && $STATE/server.p12 -nt $CERTS/server.pem ]] && return 0
  local tmp
  tmp=$(mktemp -d)
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\n' >"$tmp/ext"
  openssl req -new -key "$CERTS/server.key" -subj "/O=bq tests/CN=kafka-secure" -out "$tmp/csr" 2>/dev/null
  openssl x509 -req -in "$tmp/csr" -CA "$CERTS/ca.pem" -CAkey "$CERTS/ca.key" -CAcreateserial -CAserial "$tmp/srl" -days 3650 -extfile "$tmp/ext" -out "$tmp/pem" 2>/dev/null
  openssl pkcs12 -export -in "$tmp/pem" -inkey "$CERTS/server.key" -certfile "$CERTS/ca.pem" -name server -out "$STATE/server.p12" -passout "pass:$STORE_PASSWORD"
  rm -rf "$tmp"
}

# First start: format the metadata log with both SCRAM users in it.
format_storage() {
  [[ -f $STATE/data/meta.properties ]] && return 0
  local cluster_id out
  cluster_id=$(tool kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1)
  [[ $cluster_id =~ ^[A-Za-z0-9_-]{22}$ ]] || die "StorageTool random-uuid returned '$cluster_id'"
  out=$(tool kafka.tools.StorageTool format -t "$cluster_id" -c "$CONF/server.properties" \
    --add-scram "SCRAM-SHA-512=[name=admin,password=$ADMIN_PASSWORD]" \
    --add-scram "SCRAM-SHA-512=[name=limited,password=$LIMITED_PASSWORD]" 2>&1) || { printf '%s\n' "$out" >&2; die "formatting $STATE/data failed"; }
}

healthy() {
  port_open "$SASL_PORT" || return 1
  timeout 30 "$JAVA" "${TOOL_JVM[@]}" -Dlog4j2.configurationFile="$CONF/tools-log4j2.properties" -cp "$LIB/*" \
    org.apache.kafka.tools.BrokerApiVersionsCommand --bootstrap-server "$HOST:$SASL_PORT" --command-config "$CONF/admin.properties" 2>/dev/null |
    grep -q "^$HOST:$SASL_PORT (id: 1"
}

acl() { tool org.apache.kafka.tools.AclCommand --bootstrap-server "$HOST:$SASL_PORT" --command-config "$CONF/admin.properties" --add --force "$@" >/dev/null; }

# What bq needs, granted to `limited` on topics bqsec-lim-*: the README's list (notes) is this.
grant_acls() {
  local user=User:limited
  acl --allow-principal "$user" --operation Read --operation Describe --resource-pattern-type prefixed \
    --topic bqsec-lim- --group bq-redrive.bqsec-lim- --group bq-redrive-lock.bqsec-lim- --topic bqsec-ro-
  # bqsec-ro-*: topics limited may read (and redrive out of) but never write.
  acl --allow-principal "$user" --operation Write --operation Create --resource-pattern-type prefixed --topic bqsec-lim-
}

start() {
  mkdir -p "$STATE"
  exec 9>"$STATE/.lock"
  flock -w 600 9 || die "another secure.sh is busy (lock $STATE/.lock)"
  local pid
  if pid=$(broker_pid) && healthy; then say "already running and healthy (pid $pid)"; return 0; fi
  bash "$REPO_ROOT/test/support/make-certs.sh" "$CERTS"
  [[ -f $CERTS/truststore.p12 ]] || die "$CERTS/truststore.p12 is missing (keytool is needed to make it)"
  ensure_jars
  make_keystore
  write_config
  if [[ -z ${pid:-} ]]; then
    for port in "$SASL_PORT" "$MTLS_PORT" "$CONTROLLER_PORT"; do
      if port_open "$port"; then die "port $HOST:$port is already in use by another process"; fi
    done
    format_storage
    [[ -f $LOG ]] && mv -f "$LOG" "$LOG.prev"
    # A pid file left by a machine that stopped would pass for this start's below.
    rm -f "$PIDFILE"
    local t0=$SECONDS
    say "starting (log: $LOG)"
    (
      exec 9>&- </dev/null >>"$LOG" 2>&1
      cd "$STATE" || exit 1
      # shellcheck disable=SC2016 # expanded by the child shell
      exec setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$PIDFILE" \
        "$JAVA" -Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
        -Dlog4j2.configurationFile="$CONF/log4j2.properties" -Dkafka.logs.dir="$STATE/logs" \
        -Dbq.test.broker=kafka-secure -cp "$LIB/*" kafka.Kafka "$CONF/server.properties"
    ) &
    for _ in $(seq 100); do [[ -s $PIDFILE ]] && break; sleep 0.1; done
    [[ -s $PIDFILE ]] || die "the launcher did not write $PIDFILE within 10s"
    pid=$(<"$PIDFILE")
  fi
  local deadline=$((SECONDS + START_TIMEOUT))
  until healthy; do
    kill -0 "$pid" 2>/dev/null || { tail -n 40 "$LOG" >&2; rm -f "$PIDFILE"; die "the broker exited during startup (log: $LOG)"; }
    ((SECONDS < deadline)) || { tail -n 40 "$LOG" >&2; stop; die "not healthy after ${START_TIMEOUT}s (stopped it; log: $LOG)"; }
    sleep 1
  done
  grant_acls
  say "healthy on $HOST:$SASL_PORT (SASL_SSL) and $HOST:$MTLS_PORT (mTLS) after $((SECONDS - ${t0:-$SECONDS}))s (pid $pid)"
}

stop() {
  local pid waited=0
  if ! pid=$(broker_pid); then rm -f "$PIDFILE"; say "not running"; return 0; fi
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do
    if ((waited >= 300)); then kill -KILL "$pid" 2>/dev/null || true; sleep 0.5; break; fi
    sleep 0.1
    waited=$((waited + 1))
  done
  rm -f "$PIDFILE"
  say "stopped (pid $pid)"
}

# After a failed start: stop, and drop the metadata and topic logs (a start killed half-way can
# leave them unusable); the next start formats them again with both SCRAM users.
reset() {
  stop
  rm -rf "$STATE/data" "$STATE/logs"
  say "removed $STATE/data (certificates, key store and jars kept)"
}

status() {
  local pid
  if pid=$(broker_pid); then
    if healthy; then say "healthy (pid $pid) on $HOST:$SASL_PORT,$MTLS_PORT"; else say "UNHEALTHY (pid $pid)"; return 1; fi
  else
    say "stopped"
    return 1
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  reset) reset ;;
  status) status ;;
  *) echo "usage: $0 start|stop|reset|status" >&2; exit 2 ;;
esac
