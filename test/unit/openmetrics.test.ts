/**
 * `--format openmetrics` / `prometheus` of bq dlq ls and bq inflight ls, from constructed
 * listings: the exposition writer (src/lib/output/openmetrics.ts), the two mappings, the flag
 * check, and the in-flight counts dlq ls adds. Every text is read back with a real parser
 * (parse-prometheus-text-format, through test/support/metrics-text.ts).
 */
import {describe, test} from 'node:test'
import assert from 'node:assert/strict'

import type {BrokerAdapter, InflightGauge, InflightReport} from '../../src/lib/brokers/adapter.js'
import {metricsFormatOf} from '../../src/lib/cli/flags.js'
import {AuthError, ConnectionError, ExitCode, QueueNotFoundError, UsageError} from '../../src/lib/errors.js'
import {inflightOfOrigins} from '../../src/lib/ops/dlq-inflight.js'
import type {DlqSummary} from '../../src/lib/ops/dlq-list.js'
import {boundedReasons, dlqFamilies, REASON_MAX_CHARS} from '../../src/lib/output/dlq-metrics.js'
import {inflightFamilies, inflightMetricName} from '../../src/lib/output/inflight-metrics.js'
import {escapeLabelValue, formatValue, metricName, renderExposition} from '../../src/lib/output/openmetrics.js'
import type {MetricFamily} from '../../src/lib/output/openmetrics.js'
import {family, parseOpenMetrics, parsePrometheusText, sampleValue} from '../support/metrics-text.js'

const broker = {broker: 'redis', brokerUrl: 'redis://127.0.0.1:6379/0'}
const on = (queue: string) => ({broker: 'redis', broker_url: 'redis://127.0.0.1:6379/0', queue})
const now = Date.parse('2026-12-04T12:00:00.000Z')

function summary(dlq: string, fields: Partial<DlqSummary> = {}): DlqSummary {
  return {dlq, kind: 'convention', depth: 0, oldest_failed_at: null, newest_failed_at: null, top_reasons: [], original_queues: [], sampled: 0, ...fields}
}

/** Queue names an operator (or an attacker naming queues) could use: every character the text format treats specially. */
const hostile = [
  'we"ird.dlq',
  'back\\slash\\.dlq',
  'new\nline\n# EOF\n.dlq',
  'ünïcødé-キュー-🚀.dlq',
  'braces{a="b"},=.dlq',
  '\\"\\n literally.dlq',
  'tab\there and \r return.dlq',
]

describe('the exposition writer', () => {
  const gauge = (samples: MetricFamily['samples'], fields: Partial<MetricFamily> = {}): MetricFamily => ({name: 'bq_test_messages', type: 'gauge', help: 'Test.', samples, ...fields})

  test('OpenMetrics: HELP, TYPE, UNIT where a unit applies, samples, # EOF last', () => {
    const text = renderExposition([
      gauge([{labels: {queue: 'a'}, value: 3}]),
      gauge([{labels: {queue: 'a'}, value: 1.5}], {name: 'bq_test_age_seconds', unit: 'seconds', help: 'Age.'}),
    ], 'openmetrics')
    assert.equal(text, [
      '# HELP bq_test_messages Test.',
      '# TYPE bq_test_messages gauge',
      'bq_test_messages{queue="a"} 3',
      '# HELP bq_test_age_seconds Age.',
      '# TYPE bq_test_age_seconds gauge',
      '# UNIT bq_test_age_seconds seconds',
      'bq_test_age_seconds{queue="a"} 1.5',
      '# EOF',
      '',
    ].join('\n'))
    const parsed = parseOpenMetrics(text)
    assert.deepEqual(parsed.families.map((f) => [f.name, f.type, f.help]), [['bq_test_messages', 'GAUGE', 'Test.'], ['bq_test_age_seconds', 'GAUGE', 'Age.']])
    assert.deepEqual([...parsed.units], [['bq_test_age_seconds', 'seconds']])
    assert.equal(sampleValue(family(parsed.families, 'bq_test_age_seconds'), {queue: 'a'}), 1.5)
  })

  test('Prometheus 0.0.4: the same families without # UNIT and # EOF', () => {
    const text = renderExposition([gauge([{labels: {queue: 'a'}, value: 2}], {name: 'bq_test_age_seconds', unit: 'seconds'})], 'prometheus')
    assert.equal(text, '# HELP bq_test_age_seconds Test.\n# TYPE bq_test_age_seconds gauge\nbq_test_age_seconds{queue="a"} 2\n')
    assert.equal(sampleValue(family(parsePrometheusText(text), 'bq_test_age_seconds'), {queue: 'a'}), 2)
  })

  test('hostile label values come back exactly as they went in', () => {
    const text = renderExposition([gauge(hostile.map((queue, i) => ({labels: {queue}, value: i})))], 'openmetrics')
    // One line per sample: no newline survives unescaped.
    assert.equal(text.split('\n').length, hostile.length + 4)
    const parsed = family(parseOpenMetrics(text).families, 'bq_test_messages')
    assert.deepEqual(parsed.metrics.map((m) => m.labels?.queue), hostile)
    assert.deepEqual(parsed.metrics.map((m) => Number(m.value)), hostile.map((_, i) => i))
    assert.equal(escapeLabelValue('a"b\\c\nd'), 'a\\"b\\\\c\\nd')
  })

  test('HELP is one line: backslash and newline escaped in both formats, the double quote in OpenMetrics only', () => {
    const help = 'The broker\'s "unacked" count\\total\nsecond line'
    const om = renderExposition([gauge([{labels: {}, value: 1}], {help})], 'openmetrics')
    assert.match(om, /^# HELP bq_test_messages The broker's \\"unacked\\" count\\\\total\\nsecond line$/m)
    parseOpenMetrics(om)
    const prom = renderExposition([gauge([{labels: {}, value: 1}], {help})], 'prometheus')
    assert.equal(family(parsePrometheusText(prom), 'bq_test_messages').help, help)
  })

  test('values: integers plainly, fractions, NaN and the infinities by name; no labels, no braces', () => {
    assert.deepEqual([0, 42, 0.25, 1e21, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY].map(formatValue), ['0', '42', '0.25', '1e+21', 'NaN', '+Inf', '-Inf'])
    const text = renderExposition([gauge([{labels: {}, value: 7}])], 'openmetrics')
    assert.match(text, /^bq_test_messages 7$/m)
    assert.equal(sampleValue(family(parseOpenMetrics(text).families, 'bq_test_messages'), {}), 7)
  })

  test('families without samples are left out; nothing at all is a lone # EOF (or nothing, in 0.0.4)', () => {
    assert.equal(renderExposition([gauge([])], 'openmetrics'), '# EOF\n')
    assert.equal(renderExposition([gauge([])], 'prometheus'), '')
    assert.deepEqual(parseOpenMetrics('# EOF\n').families, [])
  })

  test('what a scraper would reject whole is refused: a bad name, a family twice, one series twice, a unit the name lacks', () => {
    assert.throws(() => renderExposition([gauge([{labels: {}, value: 1}], {name: 'bq-dash'})], 'openmetrics'), /invalid metric name/)
    assert.throws(() => renderExposition([gauge([{labels: {}, value: 1}]), gauge([{labels: {}, value: 2}])], 'openmetrics'), /written twice/)
    assert.throws(() => renderExposition([gauge([{labels: {q: 'a'}, value: 1}, {labels: {q: 'a'}, value: 2}])], 'openmetrics'), /two samples/)
    assert.throws(() => renderExposition([gauge([{labels: {}, value: 1}], {unit: 'seconds'})], 'openmetrics'), /unit/)
    assert.throws(() => renderExposition([gauge([{labels: {'bad-label': 'x'}, value: 1}])], 'openmetrics'), /invalid label name/)
    assert.throws(() => renderExposition([gauge([{labels: {__name__: 'x'}, value: 1}])], 'openmetrics'), /invalid label name/)
  })

  test('metricName makes any gauge or label name valid', () => {
    assert.deepEqual(['not_visible', 'not-visible', 'a.b c', '9lives', ''].map(metricName), ['not_visible', 'not_visible', 'a_b_c', '_9lives', '_'])
  })
})

describe('bq dlq ls as metrics', () => {
  const dlqs: DlqSummary[] = [
    summary('orders.dlq', {
      depth: 1200, sampled: 1000, oldest_failed_at: '2026-12-04T10:00:00.000Z', newest_failed_at: '2026-12-04T11:59:30.500Z',
      top_reasons: [{reason: 'failed', count: 600}, {reason: 'unknown_urn', count: 250}, {reason: 'poison', count: 100}], original_queues: ['orders'],
    }),
    summary('empty.dlq', {original_queues: ['empty']}),
    summary('rabbit.dlq', {depth: 7, not_sampled: 'rabbitmq has no true peek', original_queues: ['rabbit']}),
    ...hostile.map((dlq, i) => summary(dlq, {depth: i + 1, sampled: i + 1, top_reasons: [{reason: 'failed', count: i + 1}]})),
  ]
  const text = renderExposition(dlqFamilies({...broker, dlqs, inflight: [], now}), 'openmetrics')
  const {families, units} = parseOpenMetrics(text)

  test('names, types and units', () => {
    assert.deepEqual(families.map((f) => [f.name, f.type]), [
      ['bq_dlq_messages', 'GAUGE'],
      ['bq_dlq_sampled_messages', 'GAUGE'],
      ['bq_dlq_messages_by_reason', 'GAUGE'],
      ['bq_dlq_oldest_failed_age_seconds', 'GAUGE'],
      ['bq_dlq_newest_failed_age_seconds', 'GAUGE'],
    ])
    assert.deepEqual([...units], [['bq_dlq_oldest_failed_age_seconds', 'seconds'], ['bq_dlq_newest_failed_age_seconds', 'seconds']])
    for (const f of families) assert.ok(f.help.length > 10, `${f.name} has a HELP`)
  })

  test('depth for every DLQ, empty ones too (an alert resolves on 0)', () => {
    const depth = family(families, 'bq_dlq_messages')
    assert.equal(depth.metrics.length, dlqs.length)
    assert.equal(sampleValue(depth, on('orders.dlq')), 1200)
    assert.equal(sampleValue(depth, on('empty.dlq')), 0)
    assert.equal(sampleValue(depth, on('rabbit.dlq')), 7)
    hostile.forEach((dlq, i) => assert.equal(sampleValue(depth, on(dlq)), i + 1, JSON.stringify(dlq)))
  })

  test('sampled counts and reasons only where dlq ls read messages; reasons sum to the sample, the rest as "other"', () => {
    const sampled = family(families, 'bq_dlq_sampled_messages')
    assert.equal(sampleValue(sampled, on('orders.dlq')), 1000)
    assert.equal(sampleValue(sampled, on('empty.dlq')), 0)
    assert.equal(sampleValue(sampled, on('rabbit.dlq')), undefined)
    const reasons = family(families, 'bq_dlq_messages_by_reason')
    const orders = reasons.metrics.filter((m) => m.labels?.queue === 'orders.dlq').map((m) => [m.labels?.reason, Number(m.value)])
    assert.deepEqual(orders, [['failed', 600], ['unknown_urn', 250], ['poison', 100], ['other', 50]])
    assert.ok(!reasons.metrics.some((m) => m.labels?.queue === 'rabbit.dlq' || m.labels?.queue === 'empty.dlq'))
    assert.equal(sampleValue(reasons, {...on(hostile[2]), reason: 'failed'}), 3)
  })

  test('ages in seconds from the failed_at span, to the millisecond; none where nothing carried one', () => {
    assert.equal(sampleValue(family(families, 'bq_dlq_oldest_failed_age_seconds'), on('orders.dlq')), 7200)
    assert.equal(sampleValue(family(families, 'bq_dlq_newest_failed_age_seconds'), on('orders.dlq')), 29.5)
    assert.equal(family(families, 'bq_dlq_oldest_failed_age_seconds').metrics.length, 1)
    // A failed_at ahead of this clock is age 0, never negative.
    const ahead = renderExposition(dlqFamilies({...broker, dlqs: [summary('x.dlq', {depth: 1, sampled: 1, oldest_failed_at: '2026-12-04T12:05:00.000Z', newest_failed_at: '2026-12-04T12:05:00.000Z'})], inflight: [], now}), 'openmetrics')
    assert.equal(sampleValue(family(parseOpenMetrics(ahead).families, 'bq_dlq_oldest_failed_age_seconds'), on('x.dlq')), 0)
  })

  test('reason labels are bounded: long ones cut (never inside a surrogate pair), equal results and a reason named "other" added together', () => {
    const long = `${'x'.repeat(REASON_MAX_CHARS - 2)}🚀🚀 tail one`
    const d = summary('r.dlq', {depth: 20, sampled: 20, top_reasons: [{reason: long, count: 9}, {reason: `${'x'.repeat(REASON_MAX_CHARS - 2)}🚀🚀 tail two`, count: 5}, {reason: 'other', count: 2}]})
    const bounded = boundedReasons(d)
    const cut = `${'x'.repeat(REASON_MAX_CHARS - 2)}🚀…`
    assert.deepEqual([...bounded], [[cut, 14], ['other', 6]])
    assert.equal([...cut].length, REASON_MAX_CHARS)
    assert.deepEqual([...boundedReasons(summary('e.dlq', {depth: 3, sampled: 3, top_reasons: [{reason: '', count: 3}]}))], [['other', 3]])
    const parsed = family(parseOpenMetrics(renderExposition(dlqFamilies({...broker, dlqs: [d], inflight: [], now}), 'openmetrics')).families, 'bq_dlq_messages_by_reason')
    assert.equal(sampleValue(parsed, {...on('r.dlq'), reason: cut}), 14)
  })

  test('the in-flight counts of the original queues join the same text', () => {
    const withInflight = renderExposition(dlqFamilies({...broker, dlqs: dlqs.slice(0, 1), inflight: [{queue: 'orders', gauges: [{name: 'processing', value: 4, help: 'Elements on orders:processing.'}]}], now}), 'openmetrics')
    const parsed = parseOpenMetrics(withInflight).families
    assert.equal(sampleValue(family(parsed, 'bq_inflight_processing_messages'), on('orders')), 4)
    assert.equal(family(parsed, 'bq_inflight_processing_messages').help, 'Elements on orders:processing.')
  })

  test('the Prometheus 0.0.4 variant carries the same samples', () => {
    const prom = parsePrometheusText(renderExposition(dlqFamilies({...broker, dlqs, inflight: [], now}), 'prometheus'))
    assert.deepEqual(prom.map((f) => [f.name, f.metrics.length]), families.map((f) => [f.name, f.metrics.length]))
  })
})

describe('bq inflight ls as metrics', () => {
  // What the adapters report (InflightReport in src/lib/brokers/adapter.ts), across brokers.
  const gauges: InflightGauge[] = [
    {name: 'processing', value: 3, help: 'Elements on <queue>:processing: taken by a consumer, not yet acknowledged.'},
    {name: 'reserved', value: 1},
    {name: 'unacked', value: 5, labels: {subscription: 'billing'}, help: 'Messages delivered to the "billing" subscription\'s consumers, not acknowledged.'},
    {name: 'unacked', value: 2, labels: {subscription: 'audit "x"\n'}},
    {name: 'backlog', value: 9, labels: {subscription: 'billing'}},
    {name: 'lag', value: 12, labels: {group: 'workers', partition: '0'}},
    {name: 'lag', value: 0, labels: {group: 'workers', partition: '1'}},
    {name: 'consumers', value: 2, help: 'Consumers attached to the queue.'},
    {name: 'not-visible', value: 4, labels: {queue: 'shadow', 'consumer group': 'g'}},
  ]
  const queue = 'or"ders\\\n🚀'
  const text = renderExposition(inflightFamilies(broker, [{queue, gauges}]), 'openmetrics')
  const {families} = parseOpenMetrics(text)

  test('one family per gauge name: bq_inflight_<name>_messages, and bq_inflight_consumers', () => {
    assert.deepEqual(families.map((f) => [f.name, f.type, f.metrics.length]), [
      ['bq_inflight_processing_messages', 'GAUGE', 1],
      ['bq_inflight_reserved_messages', 'GAUGE', 1],
      ['bq_inflight_unacked_messages', 'GAUGE', 2],
      ['bq_inflight_backlog_messages', 'GAUGE', 1],
      ['bq_inflight_lag_messages', 'GAUGE', 2],
      ['bq_inflight_consumers', 'GAUGE', 1],
      ['bq_inflight_not_visible_messages', 'GAUGE', 1],
    ])
    assert.equal(inflightMetricName('consumers'), 'bq_inflight_consumers')
    assert.equal(inflightMetricName('delivering'), 'bq_inflight_delivering_messages')
  })

  test("HELP is the gauge's own help text, else a generic one", () => {
    assert.equal(family(families, 'bq_inflight_processing_messages').help, gauges[0].help)
    assert.equal(family(families, 'bq_inflight_consumers').help, 'Consumers attached to the queue.')
    assert.match(family(families, 'bq_inflight_reserved_messages').help, /in flight as the broker counts them \(reserved\)/)
    // The quotes are escaped as OpenMetrics wants (\"); this parser reads HELP as 0.0.4 does and keeps the backslash.
    assert.match(text, /^# HELP bq_inflight_unacked_messages Messages delivered to the \\"billing\\" subscription's consumers, not acknowledged\.$/m)
    const prom = parsePrometheusText(renderExposition(inflightFamilies(broker, [{queue, gauges}]), 'prometheus'))
    assert.equal(family(prom, 'bq_inflight_unacked_messages').help, gauges[2].help)
  })

  test("values and labels: broker, broker_url, queue, then the gauge's own (renamed where they would clash or are not names)", () => {
    assert.equal(sampleValue(family(families, 'bq_inflight_processing_messages'), on(queue)), 3)
    assert.equal(sampleValue(family(families, 'bq_inflight_unacked_messages'), {...on(queue), subscription: 'billing'}), 5)
    assert.equal(sampleValue(family(families, 'bq_inflight_unacked_messages'), {...on(queue), subscription: 'audit "x"\n'}), 2)
    assert.equal(sampleValue(family(families, 'bq_inflight_lag_messages'), {...on(queue), group: 'workers', partition: '0'}), 12)
    assert.equal(sampleValue(family(families, 'bq_inflight_lag_messages'), {...on(queue), group: 'workers', partition: '1'}), 0)
    assert.equal(sampleValue(family(families, 'bq_inflight_consumers'), on(queue)), 2)
    assert.equal(sampleValue(family(families, 'bq_inflight_not_visible_messages'), {...on(queue), gauge_queue: 'shadow', consumer_group: 'g'}), 4)
  })

  test('a listing with no gauge is a lone # EOF', () => {
    assert.equal(renderExposition(inflightFamilies(broker, [{queue: 'q', gauges: []}]), 'openmetrics'), '# EOF\n')
  })
})

describe('--format and --json', () => {
  test('openmetrics or prometheus with --json is a usage error (exit 2); the table is no metrics format', () => {
    for (const format of ['openmetrics', 'prometheus']) {
      assert.throws(() => metricsFormatOf(format, true), (error: unknown) => error instanceof UsageError && error.exitCode === ExitCode.usage && /--json and --format/.test(error.message) && !error.message.includes('\n'))
      assert.equal(metricsFormatOf(format, false), format)
    }
    assert.equal(metricsFormatOf('table', true), undefined)
    assert.equal(metricsFormatOf('table', false), undefined)
  })
})

describe('the in-flight counts bq dlq ls adds', () => {
  /** An adapter whose inflight() answers per queue: a report, or an error to throw. */
  function adapterWith(answers: Record<string, InflightReport | Error> | undefined): {adapter: BrokerAdapter; asked: Array<[string, number]>} {
    const asked: Array<[string, number]> = []
    const inflight = answers === undefined ? undefined : async (queue: string, options: {limit: number}): Promise<InflightReport> => {
      asked.push([queue, options.limit])
      const answer = answers[queue]
      if (answer instanceof Error) throw answer
      return answer
    }
    return {adapter: {kind: 'redis', inflight} as unknown as BrokerAdapter, asked}
  }
  const dlqs = [summary('b.dlq', {original_queues: ['b']}), summary('a.dlq', {original_queues: ['a', 'b']}), summary('c.dlq', {original_queues: ['gone']})]

  test('counts only, each original queue once, in name order; a queue that is gone is left out', async () => {
    const {adapter, asked} = adapterWith({a: {gauges: [{name: 'processing', value: 1}]}, b: {gauges: [{name: 'processing', value: 2}]}, gone: new QueueNotFoundError('no queue gone')})
    const warnings: string[] = []
    const found = await inflightOfOrigins(adapter, dlqs, (m) => warnings.push(m))
    assert.deepEqual(asked, [['a', 0], ['b', 0], ['gone', 0]])
    assert.deepEqual(found, [{queue: 'a', gauges: [{name: 'processing', value: 1}]}, {queue: 'b', gauges: [{name: 'processing', value: 2}]}])
    assert.deepEqual(warnings, [])
  })

  test('none where the adapter has no inflight()', async () => {
    assert.deepEqual(await inflightOfOrigins(adapterWith(undefined).adapter, dlqs, () => {}), [])
  })

  test('a refused figure is left out with a warning; a lost broker fails the run', async () => {
    const warnings: string[] = []
    const refused = adapterWith({a: new AuthError('no monitoring tag', 'permission'), b: {gauges: []}, gone: {gauges: []}})
    assert.deepEqual((await inflightOfOrigins(refused.adapter, dlqs, (m) => warnings.push(m))).map((f) => f.queue), ['b', 'gone'])
    assert.deepEqual(warnings, ['in-flight counts of a left out: no monitoring tag'])
    const lost = adapterWith({a: new ConnectionError('connection lost'), b: {gauges: []}, gone: {gauges: []}})
    await assert.rejects(inflightOfOrigins(lost.adapter, dlqs, () => {}), ConnectionError)
  })
})
