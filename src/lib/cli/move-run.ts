import type {BrokerAdapter} from '../brokers/adapter.js'
import type {RedriveItem, RedriveReport} from '../ops/redrive.js'
import {exitCodeOf, itemPrinter, summaryLine} from '../output/redrive-report.js'
import {OutputWriter} from '../output/writer.js'
import {stopOnInterrupt} from './interrupt.js'

/**
 * What redrive and replay share around their engines: Ctrl-C stops after the batch, per-message
 * lines when asked, the summary on stderr, items under --json, and the exit code.
 */
export async function runMoves(
  options: {json: boolean; list: boolean; verb: string; log: (line: string) => void},
  run: (hooks: {onItem: (item: RedriveItem) => void; stopRequested: () => boolean}) => Promise<RedriveReport>,
): Promise<RedriveReport & {items: RedriveItem[]}> {
  const interrupt = stopOnInterrupt()
  const out = new OutputWriter()
  const items: RedriveItem[] = []
  const print = itemPrinter(out, !options.json && options.list)
  try {
    const report = await run({
      stopRequested: interrupt.requested,
      onItem: (item) => {
        if (options.json) items.push(item)
        print(item)
      },
    })
    await out.flush()
    if (!options.json) options.log(summaryLine(report, options.verb))
    process.exitCode = exitCodeOf(report)
    return {...report, items}
  } finally {
    interrupt.dispose()
  }
}

/** The warning for --bypass on a target that cannot carry the replay marker, or undefined. */
export function bypassWarning(target: BrokerAdapter, bypass: boolean): string | undefined {
  if (!bypass || (target.capabilities.bypassMarker ?? target.capabilities.headers)) return undefined
  return `${target.kind} messages carry no headers, so --bypass cannot stamp bq-replay-bypass there (a no-op; on Redis, add ?bypass_ttl=SECONDS to the URL to write marker keys instead); use a sandbox queue with --to instead`
}
