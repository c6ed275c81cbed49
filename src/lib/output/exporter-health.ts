/**
 * The health an exporter reports beside its figures, so an alert can tell "no dead letters" from
 * "bq could not look": `bq_up` (1 when the broker answered, 0 when it did not), the time of the
 * last run that did (`bq_last_success_timestamp_seconds`, kept in bq's data directory between
 * runs) and the exit code of the last run (`bq_last_exit_code`), labelled {broker, broker_url}.
 * A failed run writes these alone, instead of nothing: a textfile collector would otherwise keep
 * serving the last good numbers as if they were current.
 */
import {mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {dataDir} from '../brokers/default-url.js'
import {brokerKind, redactUrl, resolveBrokerUrl} from '../brokers/registry.js'
import {ExitCode, outcomeOf} from '../errors.js'
import type {BrokerLabels} from './inflight-metrics.js'
import {writeExposition} from './openmetrics.js'
import type {ExpositionFormat, MetricFamily} from './openmetrics.js'

/** The failures that mean "could not look" (not a usage error, an alert or a signal, which write nothing). */
const DOWN_CODES = new Set<number>([ExitCode.failure, ExitCode.connection, ExitCode.auth])

function statePath(): string {
  return join(dataDir(), 'bq', 'exporter-last-success.json')
}

function readState(): Record<string, number> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(statePath(), 'utf8'))
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, number>) : {}
  } catch {
    return {}
  }
}

/** Keeps the time of this success; a state that cannot be written only loses the figure next time. */
function rememberSuccess(brokerUrl: string, seconds: number): void {
  try {
    const path = statePath()
    mkdirSync(join(dataDir(), 'bq'), {recursive: true})
    const temporary = `${path}.${process.pid}`
    writeFileSync(temporary, JSON.stringify({...readState(), [brokerUrl]: seconds}))
    renameSync(temporary, path)
  } catch {
    // The figures themselves are written either way.
  }
}

function families(labels: BrokerLabels, up: boolean, exitCode: number, lastSuccess: number | undefined): MetricFamily[] {
  const base = {broker: labels.broker, broker_url: labels.brokerUrl}
  const result: MetricFamily[] = [
    {name: 'bq_up', type: 'gauge', help: 'Whether bq could read the broker on its last run (1) or not (0).', samples: [{labels: base, value: up ? 1 : 0}]},
    {name: 'bq_last_exit_code', type: 'gauge', help: "The exit code of bq's last run against this broker (README: Exit codes).", samples: [{labels: base, value: exitCode}]},
  ]
  if (lastSuccess !== undefined) {
    result.push({name: 'bq_last_success_timestamp_seconds', type: 'gauge', unit: 'seconds', help: 'When bq last read this broker successfully (Unix time).', samples: [{labels: base, value: lastSuccess}]})
  }
  return result
}

/** The health of a run that read the broker: up, now, and remembered for the runs that cannot. */
export function upFamilies(labels: BrokerLabels, now: number, exitCode: number = ExitCode.ok): MetricFamily[] {
  const seconds = Math.floor(now / 1000)
  rememberSuccess(labels.brokerUrl, seconds)
  return families(labels, true, exitCode, seconds)
}

/**
 * Writes the exposition of a run that failed to read the broker (`bq_up 0`, the last success
 * where known, the exit code), for the failures that mean the broker could not be read; the
 * caller then ends with that failure as usual.
 */
export async function writeDownExposition(brokerFlag: string | undefined, error: unknown, format: ExpositionFormat): Promise<void> {
  const exitCode = outcomeOf(error).exitCode
  if (!DOWN_CODES.has(exitCode)) return
  const url = resolveBrokerUrl(brokerFlag)
  const brokerUrl = redactUrl(url)
  const labels = {broker: brokerKind(url) ?? 'unknown', brokerUrl}
  await writeExposition(families(labels, false, exitCode, readState()[brokerUrl]), format).catch(() => {})
}
