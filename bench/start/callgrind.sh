#!/usr/bin/env bash
# Instruction counts of bq's start (valgrind --tool=callgrind), which load on the machine does
# not change: node -e 0, then `bq validate one.json` and `bq --help` of this build and, given a
# package dir of another build as $1, of that one. Usage: bash bench/start/callgrind.sh [before-dir]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
one="$root/../shared/conformance/fixtures/order-created.json"
count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'; }
base=$(count node -e 0)
echo "| command | instructions | × node -e 0 |"
echo "| --- | ---: | ---: |"
echo "| node -e 0 | $base | 1.00× |"
for dir in ${1:+"$1"} "$root"; do
  name=$([ "$dir" = "$root" ] && echo bq || echo "bq before")
  for args in "validate $one" "--help"; do
    n=$(count node "$dir/bin/run.js" $args)
    echo "| $name ${args/$one/one.json} | $n | $(awk "BEGIN{printf \"%.2f\", $n/$base}")× |"
  done
done
