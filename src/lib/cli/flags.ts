import {Flags} from '@oclif/core'

import {UsageError} from '../errors.js'
import type {ExpositionFormat} from '../output/openmetrics.js'

/** Flags several commands share, defined once so their names and help stay identical. */
export const sharedFlags = {
  broker: Flags.string({char: 'b', description: 'broker URL, e.g. redis://127.0.0.1:6379 or amqp://guest:guest@localhost (default: --context, $BQ_BROKER, $BQ_CONTEXT, the current context, else the embedded sqlite store)', helpGroup: 'BROKER'}),
  // Every command with `broker` also takes `context`: BqCommand resolves the pair (src/lib/contexts/resolve.ts).
  context: Flags.string({description: 'act on this named context (bq context list); default: $BQ_CONTEXT, else the current context (bq context use)', helpGroup: 'BROKER'}),
  // Reaches the adapter through openBroker (src/lib/brokers/shared/timeouts.ts has the defaults).
  timeout: Flags.integer({description: 'seconds to wait for the broker, to connect and for each operation, before exit 4 (default: 10 to connect, 30 per operation)', min: 1, max: 86_400, helpGroup: 'BROKER'}),
  dryRun: Flags.boolean({char: 'n', description: 'show what would happen; change nothing', default: false}),
  yes: Flags.boolean({char: 'y', description: 'do not ask for confirmation (required when not on a terminal)'}),
  limit: Flags.integer({char: 'l', description: 'how many messages to show (0 = no limit, as --all)', default: 10, min: 0}),
  max: Flags.integer({description: 'stop after this many messages (0 = all present at the start)', default: 0, min: 0}),
  rate: Flags.integer({description: 'at most this many messages per second', min: 1}),
  select: Flags.string({char: 's', description: 'KEY=GLOB or KEY~REGEX; repeatable, all must match (keys: reason, urn, exception, error, original_queue, lang, id, trace_id, queue, attempts)', multiple: true, helpGroup: 'SELECT'}),
  bypass: Flags.boolean({description: 'stamp the bq-replay-bypass header so handlers skip external side effects (brokers with headers)'}),
  toBroker: Flags.string({description: 'publish to this broker instead of the source broker'}),
  receive: Flags.boolean({description: 'allow reading on brokers where a read has side effects (SQS: raises the receive count, can trigger the native redrive policy)'}),
  // The selection flags: spread `selectionFlags` into a command's flags and build the selectors with selectorsFromFlags (ops/match.ts).
  where: Flags.string({char: 'w', description: 'a CEL expression over data.*, meta.*, attempts, dead_letter.*, job, trace_id and headers["name"]; only messages for which it is true (an error on a message = no match; docs/messages.md)', helpGroup: 'SELECT'}),
  since: Flags.string({description: 'only messages from this time on: ISO 8601, Unix ms, or a duration ago (30m, 2h, 7d); failed_at on dlq commands, the enqueue time on peek (docs/messages.md)', helpGroup: 'SELECT'}),
  until: Flags.string({description: 'only messages before this time (same forms as --since)', helpGroup: 'SELECT'}),
  reason: Flags.string({description: 'why this run is made: recorded with it in the run ledger (bq runs show)'}),
  registry: Flags.string({char: 'r', description: 'babelqueue-registry registry.json with per-URN data schemas'}),
  // The `bq schema` commands' report formats (src/lib/output/schema-report.ts); --json is the machine format.
  ciFormat: Flags.string({char: 'f', description: 'report format: text, GitHub workflow annotations (::error file=…,line=…::) or JUnit XML', options: ['text', 'github', 'junit'], default: 'text'}),
  // The listing commands whose figures feed monitoring (dlq ls, inflight ls): the metrics text
  // (src/lib/output/openmetrics.ts) instead of the table; --json stays the format for scripts.
  metricsFormat: Flags.string({char: 'f', description: 'output format: the table, OpenMetrics text (Prometheus, node_exporter\'s textfile collector) or the Prometheus text format 0.0.4', options: ['table', 'openmetrics', 'prometheus'], default: 'table'}),
  // With --registry, output masks the x-gdpr-sensitive data fields (ops/mask.ts); this shows them.
  unmask: Flags.boolean({description: 'with --registry: show the data fields the registry marks x-gdpr-sensitive in clear (masked by default)', dependsOn: ['registry']}),
}

/** --select, --where, --since and --until, together on every command that selects messages. */
export const selectionFlags = {
  select: sharedFlags.select,
  where: sharedFlags.where,
  since: sharedFlags.since,
  until: sharedFlags.until,
}

/**
 * Flags that name a queue or a broker, on every command that has them. Given empty (`--to "$SANDBOX"`
 * with the variable unset) they would quietly mean "the default": the original queue, the source
 * broker, the embedded store.
 */
const NAMING_FLAGS = ['queue', 'to', 'dlq', 'broker', 'to-broker', 'context'] as const

/** Refuses an empty queue or broker name before anything runs: a usage error (exit 2). BqCommand calls it after parsing. */
export function refuseEmptyNames(flags: Record<string, unknown>): void {
  for (const name of NAMING_FLAGS) {
    const value = flags[name]
    if (typeof value === 'string' && value.trim() === '') throw new UsageError(`--${name} is empty (an unset shell variable?): name a ${name === 'context' ? 'context' : name.includes('broker') ? 'broker' : 'queue'}; nothing was done`)
  }
}

/**
 * The metrics format a listing command writes (--format openmetrics or prometheus), or undefined
 * for the table. Under --json as well it is a usage error (exit 2): the two are different outputs.
 */
export function metricsFormatOf(format: string, json: boolean): ExpositionFormat | undefined {
  if (format !== 'openmetrics' && format !== 'prometheus') return undefined
  if (json) throw new UsageError(`--json and --format ${format} cannot be used together: --json prints bq's JSON, --format ${format} the metrics text`)
  return format
}

/** The selection flags as the run ledger records them: --select always, the others when given. */
export function selectionRecord(flags: {select?: string[]; where?: string; since?: string; until?: string}): Record<string, unknown> {
  const given = Object.entries({where: flags.where, since: flags.since, until: flags.until}).filter(([, value]) => value !== undefined)
  return {select: flags.select ?? [], ...Object.fromEntries(given)}
}
