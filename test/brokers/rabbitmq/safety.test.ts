/**
 * What `bq dlq redrive` promises on RabbitMQ when a redrive can cost messages or lose its broker,
 * through the built bin/run.js against the real broker (BQ_TEST_AMQP_URL, default
 * amqp://guest:guest@127.0.0.1:5672). Queues are inspected with amqplib directly.
 *
 * - A quorum DLQ counts deliveries: a dry run is refused, and so is a redrive without
 *   --accept-delivery-cost, before anything is read (the counts prove it: a refused run costs
 *   nothing). With consent, every message a run leaves behind carries x-delivery-count raised by
 *   exactly one per run, and a run past the queue's x-delivery-limit lets the broker dead-letter
 *   what it leaves behind: the cost the operator accepted, never an extra one.
 * - A connection closed by the broker in the middle of a redrive (`rabbitmqctl close_connection`):
 *   exit 4, one error line, a report of what moved with possible_duplicates, and no message lost
 *   (every one on the DLQ or the target; copies on both bounded by possible_duplicates).
 * - A failed run's --json report arrives whole through a pipe (bq once exited before a pipe took
 *   more than 64 KiB of it).
 *
 * The connection tests need `rabbitmqctl` (BQ_TEST_RABBITMQCTL overrides the command, e.g.
 * `docker exec rabbit rabbitmqctl`); without it they skip, and fail under CI=true.
 * Every assert.ok has a message (see adapter.test.ts).
 */
import assert from 'node:assert/strict'
import {execFile} from 'node:child_process'
import {createHash} from 'node:crypto'
import {after, describe, test, type TestContext} from 'node:test'
import {promisify} from 'node:util'

import amqp from 'amqplib'
import type {Channel, ChannelModel, GetMessage} from 'amqplib'

import {requireBroker, underCI, uniqueQueue} from '../../support/brokers.js'
import {binRun, hasStackTrace, jsonOutput, runBq, startBq} from '../../support/cli.js'
import {repoRoot} from '../../support/conformance.js'
import {getAllAndClose} from './support.js'

const AMQP_URL = process.env.BQ_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'
const parsed = new URL(AMQP_URL)
const run = promisify(execFile)

// ── broker handles ────────────────────────────────────────────────────────────────────────────

const created = new Set<string>()
let raw: ChannelModel | undefined

function queueName(prefix: string): string {
  const name = uniqueQueue(`rmq-${prefix}`)
  for (const suffix of ['', '.dlq', '.dlq.limit']) created.add(name + suffix)
  return name
}

async function rawChannel(): Promise<Channel> {
  if (raw === undefined) {
    raw = await amqp.connect(AMQP_URL, {noDelay: true})
    raw.on('error', () => undefined)
  }
  const channel = await raw.createConfirmChannel()
  channel.on('error', () => undefined)
  return channel
}

async function live(t: TestContext): Promise<boolean> {
  return requireBroker(t, 'RabbitMQ', parsed.hostname, Number(parsed.port || 5672))
}

after(async () => {
  if (raw !== undefined) {
    for (const name of created) {
      const channel = await rawChannel()
      await channel.deleteQueue(name).catch(() => undefined)
      await channel.close().catch(() => undefined)
    }
    await raw.close().catch(() => undefined)
  }
})

/** Publishes bodies in order, persistent, each confirmed; declares a missing queue durable (classic). */
async function publish(queue: string, bodies: string[]): Promise<void> {
  const probe = await rawChannel()
  try {
    await probe.checkQueue(queue)
    await probe.close()
  } catch {
    // The failed check closed that channel.
    const declare = await rawChannel()
    await declare.assertQueue(queue, {durable: true})
    await declare.close()
  }
  const channel = (await rawChannel()) as amqp.ConfirmChannel
  for (const body of bodies) channel.sendToQueue(queue, Buffer.from(body), {persistent: true})
  await channel.waitForConfirms()
  await channel.close()
}

/** Every message on a queue, head first, removed (basic.get with auto-ack: no return, no count). */
async function takeAll(queue: string): Promise<GetMessage[]> {
  return getAllAndClose(await rawChannel(), queue)
}

async function counts(queue: string): Promise<{ready: number; consumers: number}> {
  const channel = await rawChannel()
  try {
    const ok = await channel.checkQueue(queue)
    return {ready: ok.messageCount, consumers: ok.consumerCount}
  } finally {
    await channel.close().catch(() => undefined)
  }
}

async function until<T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let value = await probe()
  while (!done(value)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(value)})`)
    await new Promise((resolve) => setTimeout(resolve, 100))
    value = await probe()
  }
  return value
}

const idOf = (message: GetMessage) => (JSON.parse(message.content.toString('utf8')) as {meta: {id: string}}).meta.id
const deliveryCount = (message: GetMessage) => (message.properties.headers?.['x-delivery-count'] as number | undefined) ?? 0

// ── fixtures ──────────────────────────────────────────────────────────────────────────────────

/** A dead letter of `queue`; its trace id starts with 8 × `group` (a hex digit) so --select can pick a group. */
function deadLetter(queue: string, i: number, group: string): string {
  const n = String(i).padStart(12, '0')
  // Ids unique to the queue: the loop guard remembers every id this file's earlier runs redrove.
  const salt = createHash('sha256').update(queue).digest('hex').slice(0, 4)
  return (
    `{"job":"urn:babel:orders:created","trace_id":"${group.repeat(8)}-2d4a-4e8b-9c1d-${n}","data":{"order_id":${5000 + i},"amount":99.90},` +
    `"meta":{"id":"4a1f9c2e-7b3d-4e6a-${salt}-${n}","queue":${JSON.stringify(queue)},"lang":"php","schema_version":1,"created_at":1764489600000},"attempts":3,` +
    `"dead_letter":{"reason":"failed","error":"Payment gateway timeout","exception":null,"failed_at":1764489660000,"original_queue":${JSON.stringify(queue)},"attempts":3,"lang":"php"}}`
  )
}

const metaId = (body: string) => (JSON.parse(body) as {meta: {id: string}}).meta.id
const select = (group: string) => ['--select', `trace_id=${group.repeat(8)}-*`]

/** A quorum DLQ with x-delivery-limit 2, dead-lettering past the limit to `<dlq>.limit` so nothing it drops is out of sight. */
async function quorumDlq(queue: string): Promise<string> {
  const dlq = `${queue}.dlq`
  const channel = await rawChannel()
  await channel.assertQueue(`${dlq}.limit`, {durable: true})
  await channel.assertQueue(dlq, {durable: true, arguments: {'x-queue-type': 'quorum', 'x-delivery-limit': 2, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': `${dlq}.limit`}})
  await channel.close()
  return dlq
}

/**
 * Groups interleaved so that a run's first message is one it moves and the next one it leaves
 * behind (a drain that cancels a consumer with a delivery in flight charged that one twice).
 */
function seedOrder(queue: string): {bodies: string[]; group: Record<string, string[]>} {
  const layout = ['a', 'd', 'b', 'd', 'c', 'a', 'd', 'b', 'c', 'a', 'b', 'c']
  const bodies = layout.map((group, i) => deadLetter(queue, i + 1, group))
  const group: Record<string, string[]> = {}
  layout.forEach((g, i) => (group[g] ??= []).push(metaId(bodies[i])))
  return {bodies, group}
}

function oneErrorLine(stderr: string): void {
  assert.ok(!hasStackTrace(stderr), stderr)
  assert.equal(stderr.trimEnd().split('\n').length, 1, stderr)
  assert.match(stderr, /^Error: /, stderr)
}

/** Every way of asking that must be refused without consent, none of which may read a message. */
async function assertRefused(queue: string, dlq: string): Promise<void> {
  const b = ['-b', AMQP_URL]
  const dry = await runBq(['dlq', 'redrive', queue, '--dry-run', ...b])
  assert.equal(dry.code, 2, dry.stderr)
  oneErrorLine(dry.stderr)
  assert.match(dry.stderr, new RegExp(`quorum queue "${dlq.replaceAll('.', '\\.')}".*counts deliveries: a dry run would take every message.*Nothing was read`))

  const dryJson = await runBq(['dlq', 'redrive', queue, '--dry-run', '--json', ...select('a'), ...b])
  assert.equal(dryJson.code, 2, dryJson.stdout)
  const output = jsonOutput(dryJson.stdout)
  assert.equal(!output.ok && output.error.code, 'delivery-cost', dryJson.stdout)
  assert.equal(!output.ok && output.error.exit_code, 2)

  // With consent a dry run is still refused: it would hand back every message.
  const dryConsent = await runBq(['dlq', 'redrive', queue, '--dry-run', '--accept-delivery-cost', ...b])
  assert.equal(dryConsent.code, 2, dryConsent.stderr)
  oneErrorLine(dryConsent.stderr)

  for (const extra of [[...select('a'), '--yes'], ['--yes'], select('b')]) {
    // Without --yes too: refused before the operator is asked, not for want of confirmation.
    const refused = await runBq(['dlq', 'redrive', queue, ...extra, '--json', ...b])
    assert.equal(refused.code, 2, `${extra.join(' ')}: ${refused.stdout}`)
    const refusedOutput = jsonOutput(refused.stdout)
    assert.equal(!refusedOutput.ok && refusedOutput.error.code, 'delivery-cost', refused.stdout)
    assert.match(!refusedOutput.ok ? refusedOutput.error.message : '', /add --accept-delivery-cost/)
  }
  const human = await runBq(['dlq', 'redrive', queue, ...select('a'), '--yes', ...b])
  assert.equal(human.code, 2, human.stderr)
  oneErrorLine(human.stderr)
  assert.match(human.stderr, /counts deliveries: a redrive hands the messages the selection \(--select, --where, --since, --until\) leaves behind.*Nothing was read; add --accept-delivery-cost/)
}

async function consentedRun(queue: string, group: string, expected: Record<string, number>): Promise<void> {
  const result = await runBq(['dlq', 'redrive', queue, ...select(group), '--yes', '--accept-delivery-cost', '--json', '-b', AMQP_URL])
  const output = jsonOutput(result.stdout)
  assert.equal(result.code, 0, result.stdout + result.stderr)
  assert.ok(output.ok, result.stdout)
  assert.deepEqual(output.result.counts, {would_redrive: 0, failed: 0, poison: 0, ...expected}, `run selecting ${group}`)
}

// ── a quorum DLQ with a delivery limit ────────────────────────────────────────────────────────

describe('a quorum DLQ with x-delivery-limit 2', () => {
  test('refused without consent, before anything is read; with consent every message left behind costs exactly one delivery per run', async (t) => {
    if (!(await live(t))) return
    const queue = queueName('qcost')
    const dlq = await quorumDlq(queue)
    const {bodies, group} = seedOrder(queue)
    await publish(dlq, bodies)

    await assertRefused(queue, dlq)
    // A purge that leaves messages behind and a copy (which hands back every one) are refused the same way, before anything is read or written.
    for (const args of [['dlq', 'purge', queue, ...select('a'), '--no-backup'], ['dlq', 'redrive', queue, '--copy', '--to', `${queue}.sandbox`]]) {
      const refused = await runBq([...args, '--yes', '--json', '-b', AMQP_URL])
      const output = jsonOutput(refused.stdout)
      assert.equal(!output.ok && output.error.code, 'delivery-cost', refused.stdout)
      assert.match(!output.ok ? output.error.message : '', /add --accept-delivery-cost/)
    }
    assert.deepEqual(await counts(dlq), {ready: 12, consumers: 0})

    await consentedRun(queue, 'a', {examined: 12, redriven: 3, skipped: 9})
    await assertRefused(queue, dlq)
    await consentedRun(queue, 'b', {examined: 9, redriven: 3, skipped: 6})
    await assertRefused(queue, dlq)

    // Two consented runs, any number of refused ones: exactly 2 each (a third return would pass the limit).
    const left = await takeAll(dlq)
    assert.deepEqual(left.map(idOf).sort(), [...group.c, ...group.d].sort(), 'every message not selected is still on the DLQ')
    assert.deepEqual(left.map(deliveryCount), left.map(() => 2), 'x-delivery-count 2 after two consented runs')
    assert.equal((await counts(`${dlq}.limit`)).ready, 0, 'nothing reached the delivery limit')
    const moved = await takeAll(queue)
    assert.deepEqual(moved.map(idOf).sort(), [...group.a, ...group.b].sort())
    assert.ok(moved.every((message) => !('dead_letter' in JSON.parse(message.content.toString('utf8')))), 'moved copies are reset')
  })

  test('a third consented run takes the messages it leaves behind past the limit: the broker dead-letters them, as the consent said', async (t) => {
    if (!(await live(t))) return
    const queue = queueName('qlimit')
    const dlq = await quorumDlq(queue)
    const {bodies, group} = seedOrder(queue)
    await publish(dlq, [...bodies, 'not json'])

    await consentedRun(queue, 'a', {examined: 13, redriven: 3, skipped: 9, poison: 1})
    await consentedRun(queue, 'b', {examined: 10, redriven: 3, skipped: 6, poison: 1})
    await assertRefused(queue, dlq)
    // Group c has been handed back twice, at the limit but not past it: the third run still sees and moves it.
    await consentedRun(queue, 'c', {examined: 7, redriven: 3, skipped: 3, poison: 1})

    // Group d and the poison body were handed back a third time, past the limit of 2.
    const limit = await until('the dead-lettered messages', () => counts(`${dlq}.limit`), (c) => c.ready >= 4)
    assert.equal(limit.ready, 4)
    const dead = await takeAll(`${dlq}.limit`)
    assert.deepEqual(dead.filter((message) => message.content.toString() !== 'not json').map(idOf).sort(), [...group.d].sort())
    assert.ok(dead.some((message) => message.content.toString() === 'not json'), 'the poison body was dead-lettered too')
    for (const message of dead) assert.equal(message.properties.headers?.['x-first-death-reason'], 'delivery_limit')
    assert.equal((await counts(dlq)).ready, 0)
    assert.deepEqual((await takeAll(queue)).map(idOf).sort(), [...group.a, ...group.b, ...group.c].sort())
  })

  test('a quorum DLQ without a declared limit is refused the same way (a policy or RabbitMQ 4 may set one bq cannot see)', async (t) => {
    if (!(await live(t))) return
    const queue = queueName('qnolimit')
    const dlq = `${queue}.dlq`
    const channel = await rawChannel()
    await channel.assertQueue(dlq, {durable: true, arguments: {'x-queue-type': 'quorum'}})
    await channel.close()
    await publish(dlq, [deadLetter(queue, 1, 'a')])
    const dry = await runBq(['dlq', 'redrive', queue, '--dry-run', '-b', AMQP_URL])
    assert.equal(dry.code, 2, dry.stderr)
    oneErrorLine(dry.stderr)
    // A classic DLQ beside it: a dry run is free there and runs.
    const classic = queueName('classic')
    await publish(`${classic}.dlq`, [deadLetter(classic, 1, 'a')])
    const free = await runBq(['dlq', 'redrive', classic, '--dry-run', '-b', AMQP_URL])
    assert.equal(free.code, 0, free.stderr)
    const [message] = await takeAll(dlq)
    assert.equal(deliveryCount(message), 0, 'the refused dry run read nothing')
  })
})

// ── losing the connection mid-redrive ─────────────────────────────────────────────────────────

const rabbitmqctl = (process.env.BQ_TEST_RABBITMQCTL ?? 'rabbitmqctl').split(' ').filter(Boolean)

async function ctl(args: string[]): Promise<string> {
  const {stdout} = await run(rabbitmqctl[0], [...rabbitmqctl.slice(1), ...args], {timeout: 30_000, maxBuffer: 1 << 24})
  return stdout
}

async function haveRabbitmqctl(t: TestContext): Promise<boolean> {
  try {
    await ctl(['-q', 'list_connections', 'pid'])
    return true
  } catch (error) {
    const message = `rabbitmqctl is not usable here (${(error as Error).message.split('\n')[0]}); set BQ_TEST_RABBITMQCTL`
    if (underCI) throw new Error(`${message} (CI=true: these tests must not be skipped)`)
    t.skip(message)
    return false
  }
}

/** The broker-side pid of bq's connection named `bq <purpose> (pid <pid>)`, once it is open. */
async function connectionOf(purpose: string, pid: number): Promise<string> {
  const wanted = `"bq ${purpose} (pid ${pid})"`
  return until(
    `connection ${wanted}`,
    async () => {
      const listing = await ctl(['-q', 'list_connections', '--no-table-headers', 'pid', 'client_properties'])
      const line = listing.split('\n').find((row) => row.includes(wanted))
      return line?.split('\t')[0] ?? ''
    },
    (found) => found !== '',
  )
}

const MESSAGES = 5000

for (const lost of [
  {connection: 'drain', purpose: (dlq: string) => `drain ${dlq}`},
  {connection: 'publishing', purpose: () => 'adapter'},
]) {
  test(`a redrive whose ${lost.connection} connection the broker closes mid-run: exit 4, a report of what moved, no message lost`, async (t) => {
    if (!(await live(t)) || !(await haveRabbitmqctl(t))) return
    const queue = queueName(`lost-${lost.connection}`)
    const dlq = `${queue}.dlq`
    const bodies = Array.from({length: MESSAGES}, (_, i) => deadLetter(queue, i, 'e'))
    await publish(dlq, bodies)

    // --rate keeps it running for about ten seconds.
    const redrive = startBq(['dlq', 'redrive', queue, '--yes', '--rate', '500', '--json', '-b', AMQP_URL], {timeoutMs: 120_000})
    assert.ok(redrive.child.pid !== undefined, 'bq started')
    const connection = await connectionOf(lost.purpose(dlq), redrive.child.pid)
    await until('a few hundred moved', () => counts(queue).catch(() => ({ready: 0, consumers: 0})), (c) => c.ready >= 300)
    await ctl(['close_connection', connection, 'bq test: connection closed mid-redrive'])
    const result = await redrive.done

    assert.equal(result.code, 4, result.stdout + result.stderr)
    assert.equal(result.stderr, '', 'under --json the story is on stdout')
    const output = jsonOutput(result.stdout)
    assert.ok(!output.ok, result.stdout)
    if (output.ok) return
    assert.equal(output.error.code, 'connection')
    assert.equal(output.error.exit_code, 4)
    assert.doesNotMatch(output.error.message, /\n/)
    assert.match(output.error.message, /connection .*was lost.*CONNECTION_FORCED/)
    const report = output.result as {counts: Record<string, number>; stopped_early: boolean; stop_reason: string; possible_duplicates?: number; items: Array<{id: string; outcome: string}>}
    assert.ok(report !== undefined, 'the error carries the report')
    assert.equal(report.stopped_early, true)
    assert.ok(report.counts.redriven > 0 && report.counts.redriven < MESSAGES, `moved some, not all: ${JSON.stringify(report.counts)}`)
    assert.equal(report.items.filter((item) => item.outcome === 'redriven').length, report.counts.redriven)
    const doubled = report.possible_duplicates ?? 0
    assert.ok(doubled > 0, 'a batch in flight is reported as possible duplicates')
    assert.match(report.stop_reason, new RegExp(`${doubled} message\\(s\\) may now be on both`))

    // The broker returns the lost connection's un-acked messages; then every message is somewhere.
    await until('every message back', async () => (await counts(dlq)).ready + (await counts(queue)).ready, (n) => n >= MESSAGES)
    const onDlq = (await takeAll(dlq)).map(idOf)
    const onTarget = (await takeAll(queue)).map(idOf)
    assert.equal(new Set(onDlq).size, onDlq.length, 'no message twice on the DLQ')
    assert.equal(new Set(onTarget).size, onTarget.length, 'no message twice on the target')
    const everywhere = new Set([...onDlq, ...onTarget])
    assert.equal(everywhere.size, MESSAGES, 'no message lost')
    const both = onDlq.filter((id) => onTarget.includes(id)).length
    assert.ok(both <= doubled, `${both} on both, at most the ${doubled} reported`)
    // Every message the report says moved is on the target.
    const target = new Set(onTarget)
    const redriven = report.items.filter((item) => item.outcome === 'redriven').map((item) => item.id)
    assert.ok(redriven.every((id) => target.has(id)), 'every reported move is on the target')
  })
}

test('without --json: the summary of what moved, then one error line (exit 4)', async (t) => {
  if (!(await live(t)) || !(await haveRabbitmqctl(t))) return
  const queue = queueName('lost-human')
  const dlq = `${queue}.dlq`
  await publish(dlq, Array.from({length: MESSAGES}, (_, i) => deadLetter(queue, i, 'f')))
  const redrive = startBq(['dlq', 'redrive', queue, '--yes', '--rate', '500', '-b', AMQP_URL], {timeoutMs: 120_000})
  const connection = await connectionOf(`drain ${dlq}`, redrive.child.pid!)
  await until('a few hundred moved', () => counts(queue).catch(() => ({ready: 0, consumers: 0})), (c) => c.ready >= 300)
  await ctl(['close_connection', connection, 'bq test: connection closed mid-redrive'])
  const result = await redrive.done
  assert.equal(result.code, 4, result.stderr)
  assert.ok(!hasStackTrace(result.stderr), result.stderr)
  const lines = result.stderr.trimEnd().split('\n')
  assert.equal(lines.length, 2, result.stderr)
  assert.match(lines[0], /^\d+ examined: \d+ moved, .*stopped early: .*may now be on both/)
  assert.match(lines[1], /^Error: the RabbitMQ connection to amqp:\/\/guest:\*\*\*@.* was lost during the drain/)
  assert.equal(lines.filter((line) => line.startsWith('Error:')).length, 1)
  await until('every message back', async () => (await counts(dlq)).ready + (await counts(queue)).ready, (n) => n >= MESSAGES)
})

test('a failed run\'s --json report (one item per message, over a MiB) arrives whole through a pipe read slowly', async (t) => {
  if (!(await live(t))) return
  const queue = queueName('pipe')
  // No meta.queue and no dead_letter: no original queue, so every one fails (exit 3) and stays.
  const unmovable = Array.from({length: 5000}, (_, i) => deadLetter(queue, i, 'a').replace(/"queue":"[^"]*",/, '').replace(/,"dead_letter":\{.*\}\}$/, '}'))
  await publish(`${queue}.dlq`, unmovable)
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(binRun)} dlq redrive ${queue} --yes --json -b ${JSON.stringify(AMQP_URL)} | (sleep 1; cat)`
  const {stdout} = await run('bash', ['-c', command], {cwd: repoRoot, maxBuffer: 1 << 26})
  const output = jsonOutput(stdout)
  assert.equal(!output.ok && output.error.exit_code, 3)
  assert.equal((output.result as {counts: {failed: number}}).counts.failed, 5000)
})
