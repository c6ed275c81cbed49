#!/usr/bin/env bash
# bq's main job in one go, on whatever broker is configured ($BQ_BROKER), else the embedded
# store under $XDG_DATA_HOME/bq: produce, triage a DLQ, redrive what is safe, look at the result.
set -euo pipefail
cd "$(dirname "$0")/.."
bq() { echo "\$ bq $*" >&2; node bin/run.js "$@"; }

bq publish urn:babel:orders:created --data '{"order_id":1042,"amount_cents":9990}' --queue orders --registry examples/registry.json
bq replay examples/orders.dlq.jsonl --as-is --to orders.dlq --yes      # seed a dead-letter queue from an export
bq dlq inspect orders
bq dlq redrive orders --select reason=failed --dry-run
bq dlq redrive orders --select reason=failed --yes
bq peek orders
bq dlq inspect orders --list
bq validate examples/orders.dlq.jsonl --registry examples/registry.json || echo "(validate exits 1: the export holds an invalid message, as intended)" >&2
