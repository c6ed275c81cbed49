#!/usr/bin/env bash
# Makes sure every service the tests need is running: Redis and RabbitMQ (which this kind of
# machine normally starts itself; started here if they are not) and the Java test brokers from
# test/brokers/brokers.sh (Kafka, Artemis, ElasticMQ for SQS, Pulsar; BQ_JAVA_BROKERS overrides the list,
# an empty value starts none).
# Usage: scripts/services.sh start|status
set -euo pipefail
cd "$(dirname "$0")/.."

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() {
  local name=$1 port=$2 seconds=$3
  for _ in $(seq "$seconds"); do
    port_open "$port" && return 0
    sleep 1
  done
  echo "services: $name did not open 127.0.0.1:$port within ${seconds}s" >&2
  return 1
}

# The terminal tests drive bq in a tmux pane (dlq triage, prompts) and source its completion in
# fish: Debian packages, installed when missing.
ensure_package() { # <command> <package> <why>
  command -v "$1" >/dev/null && return 0
  echo "services: installing $2 for $3"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null; } || { echo "services: could not install $2 (apt-get install $2)" >&2; exit 1; }
}

ensure_tmux() {
  ensure_package tmux tmux "the terminal tests"
  ensure_package fish fish "the fish completion test"
  ensure_package /usr/bin/time time "the test runner's CPU seconds per file"
}

ensure_redis() {
  if port_open 6379; then echo "services: redis already running on 6379"; return; fi
  command -v redis-server >/dev/null || { echo "services: redis-server is not installed (apt-get install redis-server)" >&2; exit 1; }
  mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no --dir /tmp --logfile /tmp/bq-redis.log
  wait_port redis 6379 20
  echo "services: started redis on 6379"
}

ensure_rabbitmq() {
  if port_open 5672; then
    echo "services: rabbitmq already running on 5672"
  else
    command -v rabbitmq-server >/dev/null || { echo "services: rabbitmq-server is not installed (apt-get install rabbitmq-server)" >&2; exit 1; }
    rabbitmq-server -detached
    wait_port rabbitmq 5672 90
    echo "services: started rabbitmq on 5672"
  fi
  ensure_rabbitmq_management
}

# bq dlq ls lists RabbitMQ queues through the management HTTP API (AMQP cannot list them).
# Enabling an enabled plugin is a no-op, so this runs every time.
ensure_rabbitmq_management() {
  if port_open 15672; then echo "services: rabbitmq management already on 15672"; return; fi
  rabbitmq-plugins enable rabbitmq_management >/dev/null
  wait_port "rabbitmq management" 15672 60
  echo "services: enabled rabbitmq management on 15672"
}

# True when test/brokers/brokers.sh has fetched the Kafka and Artemis files the secured brokers reuse.
jars_fetched() {
  local home=${BQ_BROKERS_HOME:-$HOME/.cache/bq-test-brokers}
  compgen -G "$home/kafka/lib/kafka-server-*.jar" >/dev/null && compgen -G "$home/artemis/dist/apache-artemis-*/bin/artemis" >/dev/null
}

case "${1:-start}" in
  start)
    ensure_tmux
    ensure_redis
    bash test/brokers/redis/tls.sh start
    bash test/brokers/redis/sentinel.sh start
    bash test/brokers/redis/cluster.sh start
    ensure_rabbitmq
    java_brokers="${BQ_JAVA_BROKERS-kafka artemis sqs pulsar}"
    # The JVM brokers start side by side (each takes 20-80 s, mostly waiting): the shared ones and
    # the secured ones of the production-broker tests, which reuse the shared ones' fetched jars;
    # on a machine that never fetched them, the shared brokers start (and fetch) first.
    secured=()
    case " $java_brokers " in *" kafka "*) secured+=(test/brokers/kafka/secure.sh) ;; esac # SASL_SSL + mTLS Kafka (kafka/secure.test.ts)
    case " $java_brokers " in *" artemis "*) secured+=(test/brokers/artemis/secure.sh) ;; esac # TLS + limited-role Artemis, 5680-5682 (artemis/secure.test.ts)
    pids=()
    if [ -n "$java_brokers" ]; then
      # shellcheck disable=SC2086 # a space-separated list of broker names
      if jars_fetched; then bash test/brokers/brokers.sh start $java_brokers & pids+=($!); else bash test/brokers/brokers.sh start $java_brokers; fi
    fi
    # A secured broker that dies on its first start (its log tail is printed) gets one more try
    # from scratch: a cold, loaded machine has made a first start fail (once leaving Kafka's
    # metadata log half-written) where a second one passed.
    for script in "${secured[@]}"; do
      { bash "$script" start || { echo "services: $script failed once; resetting its data and starting again" >&2; bash "$script" reset; bash "$script" start; }; } & pids+=($!)
    done
    failed=0
    for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
    [ "$failed" -eq 0 ] || { echo "services: a broker did not start (see above)" >&2; exit 1; }
    ;;
  status)
    for p in 6379 5672 15672; do if port_open $p; then echo "127.0.0.1:$p open"; else echo "127.0.0.1:$p closed"; fi; done
    bash test/brokers/brokers.sh status
    ;;
  *) echo "usage: $0 start|status" >&2; exit 2 ;;
esac
