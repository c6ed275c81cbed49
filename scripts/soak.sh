#!/usr/bin/env bash
# The long series of the SIGKILL, fault and restart properties, sized up from what a CI run
# does (docs/testing.md, "Soak"). Needs the services (npm run services). Each size can be
# overridden from the environment; the files run two at a time, one per broker.
#
#   npm run soak                         # every broker
#   npm run soak -- --broker redis       # one broker (run-tests.js flags pass through)
set -euo pipefail
cd "$(dirname "$0")/.."
export BQ_CRASH_TRIALS="${BQ_CRASH_TRIALS:-20}"                 # CI: 8 per broker
# Messages per SIGKILL trial stay the cases' own (20,000 embedded/Redis, 10,000 most others, 5,000 Pulsar, 4,000 SQS, 2,000
# Service Bus) unless BQ_CRASH_MESSAGES is set: BQ_CRASH_MESSAGES=20000 npm run soak is the full size.
export BQ_PURGE_CRASH_TRIALS="${BQ_PURGE_CRASH_TRIALS:-10}"     # CI: 3
export BQ_PURGE_CRASH_MESSAGES="${BQ_PURGE_CRASH_MESSAGES:-5000}"  # CI: 3,000
export BQ_INFLIGHT_CRASH_TRIALS="${BQ_INFLIGHT_CRASH_TRIALS:-20}"  # CI: 6
export BQ_FAULT_MESSAGES="${BQ_FAULT_MESSAGES:-5000}"           # CI: 2,000
exec node scripts/run-tests.js integration reliability --jobs "${BQ_TEST_JOBS:-2}" \
  --only crash.test.ts --only faults.test.ts --only restart.test.ts --only failover.test.ts --only /inflight.test.ts "$@"
