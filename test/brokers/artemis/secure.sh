#!/usr/bin/env bash
# A second ActiveMQ Artemis for the TLS and permission tests (test/brokers/artemis/secure.test.ts),
# made from the distribution test/brokers/brokers.sh fetched for the shared Artemis:
#
#   127.0.0.1:5681  AMQP over TLS (server.p12 from test/support/make-certs.sh)
#   127.0.0.1:5682  AMQP over TLS that requires a client certificate signed by the test CA
#   127.0.0.1:5680  plain CORE/AMQP, for this script's health check only
#
# Users: bq/bq (role amq: everything) and limited/limited-pw (role lim): on addresses lim.dlq.#
# it may consume and browse only; on lim.target.# it has no permission at all; on lim.ok.# it may
# send, consume and browse, and create the queue (an operator's usual "application" role), never manage.
#
#   test/brokers/artemis/secure.sh start|stop|status    (start is idempotent: healthy means done)
#
# State lives in ${BQ_BROKERS_HOME:-~/.cache/bq-test-brokers}/artemis-secure; the certificates in
# ${BQ_TEST_CERTS_DIR:-/tmp/bq-test-certs}.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$HERE/../../.." && pwd)
STATE=${BQ_BROKERS_HOME:-$HOME/.cache/bq-test-brokers}
DIR=$STATE/artemis-secure
INST=$DIR/instance
PIDFILE=$DIR/artemis-secure.pid
LOG=$DIR/artemis-secure.log
CERTS=${BQ_TEST_CERTS_DIR:-/tmp/bq-test-certs}
HOST=127.0.0.1
PLAIN_PORT=${BQ_ARTEMIS_SECURE_PLAIN_PORT:-5680}
TLS_PORT=${BQ_ARTEMIS_SECURE_TLS_PORT:-5681}
MTLS_PORT=${BQ_ARTEMIS_SECURE_MTLS_PORT:-5682}
HEAP_MAX=256M
MARKER=-Dbq.test.broker=artemis-secure

say() { printf 'artemis-secure: %s\n' "$*"; }
die() { printf 'artemis-secure: %s\n' "$*" >&2; exit 1; }
port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

dist() {
  local home
  home=$(ls -d "$STATE"/artemis/dist/apache-artemis-* 2>/dev/null | head -n 1 || true)
  if [[ -z $home || ! -x $home/bin/artemis ]]; then
    # Not fetched yet: brokers.sh fetches (and starts) the shared Artemis, which the suite needs anyway.
    bash "$REPO_ROOT/test/brokers/brokers.sh" start artemis >&2
    home=$(ls -d "$STATE"/artemis/dist/apache-artemis-* | head -n 1)
  fi
  printf '%s\n' "$home"
}

# The broker's pid: the pid file's when that process bears the marker, else any process that does
# (a pid file left by a machine that stopped, or a start that lost its pid file, must not hide a
# running broker from stop and reset).
running_pid() {
  local pid=
  [[ -f $PIDFILE ]] && pid=$(<"$PIDFILE")
  if [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$MARKER "; then
    printf '%s\n' "$pid"
    return 0
  fi
  pid=$(pgrep -f -- "$MARKER " | head -n 1) || true
  [[ -n $pid ]] || return 1
  printf '%s\n' "$pid"
}

healthy() {
  port_open "$TLS_PORT" && port_open "$MTLS_PORT" || return 1
  timeout 60 "$INST/bin/artemis" queue stat --silent --url "tcp://$HOST:$PLAIN_PORT" \
    --user bq --password bq </dev/null 2>&1 | grep -q '|DLQ '
}

tls_params() { # <needClientAuth>
  local params="sslEnabled=true;keyStorePath=$CERTS/server.p12;keyStorePassword=bqtest;keyStoreType=PKCS12"
  [[ $1 == true ]] && params+=";needClientAuth=true;trustStorePath=$CERTS/truststore.p12;trustStorePassword=bqtest;trustStoreType=PKCS12"
  printf '%s;protocols=AMQP;amqpCredits=1000;amqpLowCredits=300' "$params"
}

prepare() {
  local home stamp
  bash "$REPO_ROOT/test/support/make-certs.sh" "$CERTS"
  home=$(dist)
  stamp=$(printf '%s\n' "$home" "$CERTS" "$PLAIN_PORT" "$TLS_PORT" "$MTLS_PORT" "$HEAP_MAX" "$(sha256sum <"${BASH_SOURCE[0]}")" | sha256sum | cut -d' ' -f1)
  [[ -f $INST/.bq-stamp && $(<"$INST/.bq-stamp") == "$stamp" ]] && return 0
  rm -rf "$INST"
  mkdir -p "$DIR"
  "$home/bin/artemis" create --silent --name bq-secure --user bq --password bq --require-login \
    --host "$HOST" --default-port "$PLAIN_PORT" \
    --no-amqp-acceptor --no-mqtt-acceptor --no-stomp-acceptor --no-hornetq-acceptor --no-web \
    --java-memory "$HEAP_MAX" "--java-options=$MARKER" --java-options=-XX:TieredStopAtLevel=1 \
    --java-utility-options=-XX:TieredStopAtLevel=1 --java-utility-options=-XX:+UseSerialGC --java-utility-options=-Xmx128m \
    --no-fsync --no-autotune "$INST" </dev/null >"$DIR/create.log" 2>&1 || { cat "$DIR/create.log" >&2; die "'artemis create' failed"; }
  sed -i 's/-Xms[0-9]*[MmGg]/-Xms64M/' "$INST/etc/artemis.profile"
  local xml=$INST/etc/broker.xml
  # The two TLS acceptors, beside the plain one `create` wrote.
  python3 - "$xml" "$HOST" "$TLS_PORT" "$MTLS_PORT" "$(tls_params false)" "$(tls_params true)" <<'PY'
import sys
path, host, tls_port, mtls_port, tls, mtls = sys.argv[1:]
text = open(path).read()
acceptors = (f'<acceptor name="tls">tcp://{host}:{tls_port}?{tls}</acceptor>\n'
             f'         <acceptor name="mtls">tcp://{host}:{mtls_port}?{mtls}</acceptor>\n'
             '      </acceptors>')
assert '</acceptors>' in text
text = text.replace('</acceptors>', acceptors, 1)
everything = ['createNonDurableQueue', 'deleteNonDurableQueue', 'createDurableQueue', 'deleteDurableQueue',
              'createAddress', 'deleteAddress', 'consume', 'browse', 'send', 'manage']
def setting(match, roles_of):
    lines = [f'         <security-setting match="{match}">']
    for permission in everything:
        roles = ','.join(roles_of(permission))
        lines.append(f'            <permission type="{permission}" roles="{roles}"/>')
    lines.append('         </security-setting>')
    return '\n'.join(lines)
lim_dlq = {'consume', 'browse'}
lim_ok = {'createDurableQueue', 'createAddress', 'consume', 'browse', 'send'}
settings = '\n'.join([
    setting('#', lambda p: ['amq']),
    setting('lim.dlq.#', lambda p: ['amq'] + (['lim'] if p in lim_dlq else [])),
    setting('lim.target.#', lambda p: ['amq']),
    setting('lim.ok.#', lambda p: ['amq'] + (['lim'] if p in lim_ok else [])),
])
start, end = text.index('<security-settings>'), text.index('</security-settings>')
text = text[:start] + '<security-settings>\n' + settings + '\n      ' + text[end:]
open(path, 'w').write(text)
PY
  grep -q 'name="mtls"' "$xml" || die "the TLS acceptors are missing from $xml"
  printf 'bq = bq\nlimited = limited-pw\n' >"$INST/etc/artemis-users.properties"
  printf 'amq = bq\nlim = limited\n' >"$INST/etc/artemis-roles.properties"
  printf '%s\n' "$stamp" >"$INST/.bq-stamp"
}

start() {
  local pid
  if pid=$(running_pid); then
    for _ in $(seq 120); do
      if healthy; then say "already running and healthy (pid $pid)"; return 0; fi
      sleep 1
    done
    die "running (pid $pid) but not healthy after 120s (log: $LOG)"
  fi
  for port in "$PLAIN_PORT" "$TLS_PORT" "$MTLS_PORT"; do
    if port_open "$port"; then die "port $HOST:$port is already in use by another process"; fi
  done
  prepare
  [[ -f $LOG ]] && mv -f "$LOG" "$LOG.prev"
  # A pid file left by a machine that stopped would pass for this start's below.
  rm -f "$PIDFILE"
  (
    exec </dev/null >>"$LOG" 2>&1
    # shellcheck disable=SC2016 # expanded by the child shell
    exec setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$PIDFILE" "$INST/bin/artemis" run
  ) &
  for _ in $(seq 100); do [[ -s $PIDFILE ]] && break; sleep 0.1; done
  [[ -s $PIDFILE ]] || die "the launcher did not write $PIDFILE within 10s"
  pid=$(<"$PIDFILE")
  for _ in $(seq 180); do
    if healthy; then say "healthy on $HOST:$TLS_PORT (TLS), $HOST:$MTLS_PORT (TLS, client certificate) (pid $pid)"; return 0; fi
    # Alive, not the marker: until bin/artemis execs java, the process is still that shell script
    # (its command line has no marker yet); on a slow first start that window lasts seconds.
    kill -0 "$pid" 2>/dev/null || { tail -n 30 "$LOG" >&2; die "exited while starting (log: $LOG)"; }
    sleep 1
  done
  tail -n 30 "$LOG" >&2
  die "not healthy after 180s (log: $LOG)"
}

stop() {
  local pid
  if ! pid=$(running_pid); then rm -f "$PIDFILE"; say "not running"; return 0; fi
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 300); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$PIDFILE"; say "stopped (pid $pid)"; return 0; }
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$PIDFILE"
  say "killed (pid $pid) 30s after TERM"
}

# After a failed start: stop, and drop the instance (its journal and configuration), which the
# next start creates again.
reset() {
  stop
  rm -rf "$INST"
  say "removed $INST"
}

status() {
  local pid
  if pid=$(running_pid); then
    if healthy; then say "healthy (pid $pid) $HOST:$TLS_PORT,$MTLS_PORT"; else say "UNHEALTHY (pid $pid)"; return 1; fi
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
