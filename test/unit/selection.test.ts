/** Message selection: --where (CEL over the lossless envelope), --since/--until windows, and how they combine with --select. */
import {test} from 'node:test'
import assert from 'node:assert/strict'

import type {BrokerMessage} from '../../src/lib/brokers/adapter.js'
import {BODY_ATTEMPTS} from '../../src/lib/brokers/adapter.js'
import {UsageError} from '../../src/lib/errors.js'
import {matchesAll, selectorsFromFlags} from '../../src/lib/ops/match.js'
import {viewOf} from '../../src/lib/ops/message-view.js'
import {parseTimeBound, parseTimeWindow} from '../../src/lib/ops/time-window.js'
import {compileWhere} from '../../src/lib/ops/where.js'
import {whereActivation} from '../../src/lib/ops/where-values.js'

const deadLettered = '{"job":"urn:babel:orders:created","trace_id":"t-1","data":{"order_id":9007199254740993,"price":10.50,"tags":["vip"],"customer":{"email":"a@example.com"}},"meta":{"id":"m-1","queue":"orders","lang":"go","schema_version":1,"created_at":1764489600000},"attempts":3,"dead_letter":{"reason":"failed","error":"timeout","exception":"TimeoutError","failed_at":1764489660000,"original_queue":"orders","attempts":3}}'

function view(body: string, extra: Partial<BrokerMessage> = {}) {
  return viewOf({body: Buffer.from(body), headers: {}, native: {}, appHeaders: {'x-tenant': 'acme'}, ...extra}, BODY_ATTEMPTS)
}

const matches = (expression: string, body = deadLettered) => compileWhere(expression).matches(view(body))

test('integers are exact BigInts beyond 2^53; decimals are doubles', () => {
  const values = whereActivation(view(deadLettered)) as {data: {order_id: unknown; price: unknown}}
  assert.equal(values.data.order_id, 9007199254740993n)
  assert.equal(values.data.price, 10.5)
  assert.equal(matches('data.order_id == 9007199254740993'), true)
  // JSON.parse would round both to 9007199254740992 and call them equal.
  assert.equal(matches('data.order_id == 9007199254740992'), false)
  assert.equal(matches('data.order_id > 9007199254740992'), true)
  assert.equal(matches('data.price == 10.5 && data.price > 10 && data.price < 11.0'), true)
})

test('the envelope, dead_letter and headers are all reachable; strings, lists and maps work as CEL says', () => {
  assert.equal(matches('job.startsWith("urn:babel:orders:") && trace_id == "t-1"'), true)
  assert.equal(matches('meta.lang == "go" && attempts >= 3'), true)
  assert.equal(matches('dead_letter.exception.matches("^Timeout") && dead_letter.failed_at > meta.created_at'), true)
  assert.equal(matches('headers["x-tenant"] == "acme" && "x-tenant" in headers'), true)
  assert.equal(matches('"vip" in data.tags && data.customer.email.endsWith("@example.com")'), true)
  assert.equal(matches('meta.lang == "php"'), false)
})

test('an evaluation error on one message is "no match"; has() tests for a field first', () => {
  assert.equal(matches('data.missing == 1'), false)
  assert.equal(matches('!(data.missing == 1)'), false)
  assert.equal(matches('has(data.missing)'), false)
  assert.equal(matches('!has(data.missing)'), true)
  assert.equal(matches('headers["absent"] == "x"'), false)
  // A message that is not an envelope has nothing to test.
  assert.equal(matches('true', 'not json'), false)
})

test('nothing outside the message is reachable', () => {
  assert.equal(matches('has(data.constructor)'), false)
  assert.equal(matches('data.__proto__ != null'), false)
})

test('a syntax or type error is a one-line usage error naming the column', () => {
  const fails = (expression: string, pattern: RegExp) => assert.throws(() => compileWhere(expression), (error: unknown) => {
    assert.ok(error instanceof UsageError)
    assert.equal(error.exitCode, 2)
    assert.ok(!error.message.includes('\n'), error.message)
    assert.match(error.message, pattern)
    return true
  })
  fails('data.x == ', /column 11: Unexpected token/)
  fails('data.x = 1', /column 8: /)
  fails('dat.x == 1', /column 1: Unknown variable: dat/)
  fails('1 + 2', /gives int, not true or false/)
})

test('durations mean that long ago; ISO times and Unix ms are absolute; anything else is refused', () => {
  const now = Date.parse('2026-12-01T12:00:00Z')
  assert.equal(parseTimeBound('2h', 'since', now), now - 2 * 3_600_000)
  assert.equal(parseTimeBound('1h30m', 'since', now), now - 90 * 60_000)
  assert.equal(parseTimeBound('7d', 'since', now), now - 7 * 86_400_000)
  assert.equal(parseTimeBound('2026-11-30T08:00:00Z', 'since', now), Date.parse('2026-11-30T08:00:00Z'))
  assert.equal(parseTimeBound('1764489600000', 'since', now), 1764489600000)
  for (const bad of ['5x', 'yesterday', '1', 'May 3', '']) assert.throws(() => parseTimeBound(bad, 'since', now), UsageError, bad)
  assert.throws(() => parseTimeWindow({since: '1h', until: '2h'}, now), /not before --until/)
})

test('--since is inclusive, --until exclusive, on failed_at for a DLQ and the enqueue time elsewhere', async () => {
  const failedAt = 1764489660000
  const dlq = async (since?: string, until?: string) => matchesAll(view(deadLettered), await selectorsFromFlags({since, until}, 'failed_at'))
  assert.equal(await dlq(String(failedAt)), true)
  assert.equal(await dlq(String(failedAt + 1)), false)
  assert.equal(await dlq(undefined, String(failedAt)), false)
  assert.equal(await dlq(undefined, String(failedAt + 1)), true)
  const enqueued = view(deadLettered, {enqueuedAt: 1764490000000})
  assert.equal(matchesAll(enqueued, await selectorsFromFlags({since: '1764490000000'}, 'enqueued')), true)
  assert.equal(matchesAll(enqueued, await selectorsFromFlags({since: '1764490000001'}, 'enqueued')), false)
  // Without a broker time, meta.created_at stands in; a file is timed by failed_at.
  assert.equal(matchesAll(view(deadLettered), await selectorsFromFlags({until: '1764489600001'}, 'enqueued')), true)
  assert.equal(matchesAll(view(deadLettered), await selectorsFromFlags({until: '1764489600001'}, 'recorded')), false)
  // A message without the time never matches a window.
  const plain = '{"job":"urn:babel:orders:created","data":{},"meta":{"id":"m-2","queue":"orders"}}'
  assert.equal(matchesAll(view(plain), await selectorsFromFlags({since: '1'.padEnd(13, '0')}, 'failed_at')), false)
})

test('--select, --where and the window are ANDed', async () => {
  const all = await selectorsFromFlags({select: ['reason=failed'], where: 'data.price > 10', since: '1764489660000'}, 'failed_at')
  assert.equal(all.length, 3)
  assert.equal(matchesAll(view(deadLettered), all), true)
  assert.equal(matchesAll(view(deadLettered), await selectorsFromFlags({select: ['reason=other'], where: 'data.price > 10'}, 'failed_at')), false)
  assert.equal(matchesAll(view(deadLettered), await selectorsFromFlags({select: ['reason=failed'], where: 'data.price > 11'}, 'failed_at')), false)
})
