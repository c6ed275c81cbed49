#!/usr/bin/env bash
# Prints the path of the Artemis JMS client jar (artemis-jms-client-all, the broker's version),
# fetching it from Maven Central with pom.xml the first time. Later calls find it in the state dir
# (${BQ_BROKERS_HOME:-~/.cache/bq-test-brokers}/artemis-jms-client) and run no Maven at all; when
# Maven must run it tries offline first, so a warm ~/.m2 means no network.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=$(realpath -m -- "${BQ_BROKERS_HOME:-$HOME/.cache/bq-test-brokers}")
OUT="$STATE/artemis-jms-client"
JAR="$OUT/artemis-jms-client-all.jar"
STAMP=$(sha256sum <"$HERE/pom.xml" | cut -d' ' -f1)
if [[ -s $JAR && -f $OUT/.bq-stamp && $(<"$OUT/.bq-stamp") == "$STAMP" ]]; then
  printf '%s\n' "$JAR"
  exit 0
fi
mkdir -p "$OUT"
MVN=${MVN:-mvn}
read -r -a MVN_EXTRA <<<"${BQ_BROKERS_MVN_ARGS:-}"
command -v "$MVN" >/dev/null 2>&1 || { echo "artemis-jms-client: mvn not found (install Maven 3.8+ or set MVN)" >&2; exit 1; }
LOG="$OUT/fetch.log"
if ! "$MVN" -B -q -o -f "$HERE/pom.xml" -Dbq.state="$STATE" "${MVN_EXTRA[@]}" dependency:copy >"$LOG" 2>&1; then
  "$MVN" -B -q -f "$HERE/pom.xml" -Dbq.state="$STATE" "${MVN_EXTRA[@]}" dependency:copy >>"$LOG" 2>&1 ||
    { echo "artemis-jms-client: Maven could not fetch the jar (full output: $LOG)" >&2; exit 1; }
fi
[[ -s $JAR ]] || { echo "artemis-jms-client: $JAR missing after the fetch (see $LOG)" >&2; exit 1; }
printf '%s\n' "$STAMP" >"$OUT/.bq-stamp"
printf '%s\n' "$JAR"
