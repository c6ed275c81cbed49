/**
 * Receive counts on SQS (ElasticMQ by default, BQ_TEST_SQS_URL), through the built CLI: every
 * receive raises ApproximateReceiveCount, and a queue with its own RedrivePolicy moves a message
 * whose count passes maxReceiveCount to the policy's dead-letter queue. So on a DLQ that has a
 * RedrivePolicy (a chain: orders → orders-dlq → orders-dlq-final) bq refuses a dry run, and a
 * redrive without --accept-delivery-cost, before receiving anything; with consent each run costs
 * what it leaves behind one receive, and a run past the limit lets SQS move them on (the cost the
 * operator accepted). A DLQ without a RedrivePolicy is free to look at (with --receive).
 */
import assert from 'node:assert/strict'
import {after, describe, test} from 'node:test'

import {CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand} from '@aws-sdk/client-sqs'

import {openBroker} from '../../../src/lib/brokers/registry.js'
import {annotate, fieldsOf, make} from '../../../src/lib/envelope/index.js'
import {uniqueQueue} from '../../support/brokers.js'
import {hasStackTrace, jsonOutput, runBq} from '../../support/cli.js'
import {closeRawSqs, deleteQueues, queueUrl, rawSqs, sqsAvailable, sqsUrl} from './support.js'

const created: string[] = []
after(async () => {
  await deleteQueues(created).catch(() => undefined)
  closeRawSqs()
})

/** `<base>-dlq` with RedrivePolicy {maxReceiveCount, → `<base>-dlq-final`}; returns the names. */
async function chain(maxReceiveCount: number): Promise<{queue: string; dlq: string; final: string}> {
  const queue = uniqueQueue('sqscost')
  const dlq = `${queue}-dlq`
  const final = `${queue}-dlq-final`
  created.push(queue, dlq, final)
  const client = rawSqs()
  const finalUrl = (await client.send(new CreateQueueCommand({QueueName: final}))).QueueUrl!
  const finalArn = (await client.send(new GetQueueAttributesCommand({QueueUrl: finalUrl, AttributeNames: ['QueueArn']}))).Attributes!.QueueArn!
  await client.send(new CreateQueueCommand({QueueName: dlq, Attributes: {RedrivePolicy: JSON.stringify({deadLetterTargetArn: finalArn, maxReceiveCount})}}))
  return {queue, dlq, final}
}

/** Dead letters of `queue`, two per group; the group is the dead_letter reason. */
async function seed(queue: string, dlq: string, groups: string[]): Promise<void> {
  const adapter = await openBroker(sqsUrl)
  try {
    const messages = groups.flatMap((group) => [0, 1].map((k) => {
      const envelope = annotate(make('urn:babel:orders:created', `{"group":"${group}","k":${k}}`, {queue}), {reason: group, originalQueue: queue, error: 'boom', failedAt: 1749132730000, attempts: 3})
      return {body: envelope.toBuffer(), fields: fieldsOf(envelope)}
    }))
    await adapter.publish(dlq, messages)
  } finally {
    await adapter.close()
  }
}

async function depths(queue: string): Promise<{visible: number; inFlight: number}> {
  const attributes = (await rawSqs().send(new GetQueueAttributesCommand({QueueUrl: await queueUrl(queue), AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible']}))).Attributes ?? {}
  return {visible: Number(attributes.ApproximateNumberOfMessages), inFlight: Number(attributes.ApproximateNumberOfMessagesNotVisible)}
}

/** Every message on a queue (its group, and its receive count with this receive), received and left invisible: the queues are deleted after the tests. */
async function groupsOn(queue: string): Promise<Array<{group: string; receives: number}>> {
  const url = await queueUrl(queue)
  const out: Array<{group: string; receives: number}> = []
  for (let empty = 0; empty < 2; ) {
    const got = await rawSqs().send(new ReceiveMessageCommand({QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 300, WaitTimeSeconds: 0, MessageSystemAttributeNames: ['ApproximateReceiveCount']}))
    const messages = got.Messages ?? []
    if (messages.length === 0) {
      empty++
      continue
    }
    for (const message of messages) out.push({group: (JSON.parse(message.Body!) as {data: {group: string}}).data.group, receives: Number(message.Attributes?.ApproximateReceiveCount)})
  }
  return out.sort((x, y) => x.group.localeCompare(y.group))
}

function oneErrorLine(stderr: string): void {
  assert.ok(!hasStackTrace(stderr), stderr)
  assert.equal(stderr.trimEnd().split('\n').length, 1, stderr)
  assert.match(stderr, /^Error: /, stderr)
}

async function consented(queue: string, dlq: string, group: string, expected: Record<string, number>): Promise<void> {
  const result = await runBq(['dlq', 'redrive', queue, '--dlq', dlq, '--select', `reason=${group}`, '--yes', '--accept-delivery-cost', '--json', '-b', sqsUrl])
  assert.equal(result.code, 0, result.stdout + result.stderr)
  const output = jsonOutput(result.stdout)
  assert.ok(output.ok, result.stdout)
  assert.deepEqual(output.result.counts, {would_redrive: 0, failed: 0, poison: 0, ...expected}, `run selecting ${group}`)
}

describe('sqs: a DLQ with a RedrivePolicy of its own counts receives', () => {
  test('a dry run and a redrive without --accept-delivery-cost are refused before anything is received', async (t) => {
    if (!(await sqsAvailable(t))) return
    const {queue, dlq, final} = await chain(2)
    await seed(queue, dlq, ['a', 'b'])

    const dry = await runBq(['dlq', 'redrive', queue, '--dlq', dlq, '--dry-run', '--receive', '-b', sqsUrl])
    assert.equal(dry.code, 2, dry.stderr)
    oneErrorLine(dry.stderr)
    assert.match(dry.stderr, new RegExp(`SQS queue "${dlq}" \\(it has a RedrivePolicy\\) \\(delivery limit 2\\) counts deliveries: a dry run would take every message.*ApproximateReceiveCount.*queue "${final}".*Nothing was read`))
    for (const extra of [['--select', 'reason=a', '--yes'], ['--yes'], ['--select', 'reason=a']]) {
      const refused = await runBq(['dlq', 'redrive', queue, '--dlq', dlq, ...extra, '--json', '-b', sqsUrl])
      assert.equal(refused.code, 2, `${extra.join(' ')}: ${refused.stdout}`)
      const output = jsonOutput(refused.stdout)
      assert.equal(!output.ok && output.error.code, 'delivery-cost', refused.stdout)
    }
    assert.deepEqual(await depths(dlq), {visible: 4, inFlight: 0})
    // Never received before: this receive is each one's first.
    assert.deepEqual((await groupsOn(dlq)).map((m) => m.receives), [1, 1, 1, 1])
  })

  test('with consent, each run costs what it leaves behind one receive; past maxReceiveCount the next receive moves them on', async (t) => {
    if (!(await sqsAvailable(t))) return
    const {queue, dlq, final} = await chain(2)
    await seed(queue, dlq, ['a', 'b', 'c', 'd'])
    await consented(queue, dlq, 'a', {examined: 8, redriven: 2, skipped: 6})
    await consented(queue, dlq, 'b', {examined: 6, redriven: 2, skipped: 4})
    // c and d were received twice, up to maxReceiveCount 2: SQS checks at the receive, so the
    // third run's receives move them all to the final queue instead of handing them over (a
    // RabbitMQ quorum queue counts at the return, and hands them over once more).
    await consented(queue, dlq, 'c', {examined: 0, redriven: 0, skipped: 0})
    assert.deepEqual(await groupsOn(queue).then((m) => m.map((x) => x.group)), ['a', 'a', 'b', 'b'])
    assert.deepEqual(await groupsOn(final).then((m) => m.map((x) => x.group)), ['c', 'c', 'd', 'd'], 'moved on by the RedrivePolicy')
    assert.deepEqual(await depths(dlq), {visible: 0, inFlight: 0})
  })

  test('a DLQ without a RedrivePolicy: a dry run (with --receive) and a plain redrive run as before', async (t) => {
    if (!(await sqsAvailable(t))) return
    const queue = uniqueQueue('sqsfree')
    const dlq = `${queue}-dlq`
    created.push(queue, dlq)
    await seed(queue, dlq, ['a', 'b'])
    const dry = await runBq(['dlq', 'redrive', queue, '--dlq', dlq, '--dry-run', '--receive', '-b', sqsUrl])
    assert.equal(dry.code, 0, dry.stderr)
    const run = await runBq(['dlq', 'redrive', queue, '--dlq', dlq, '--select', 'reason=a', '--yes', '-b', sqsUrl])
    assert.equal(run.code, 0, run.stderr)
    assert.deepEqual(await groupsOn(queue).then((m) => m.map((x) => x.group)), ['a', 'a'])
  })
})

describe('sqs: dlq ls finds RedrivePolicy targets', () => {
  test('a queue named as a RedrivePolicy target is a native DLQ of its source; nothing is received', async (t) => {
    if (!(await sqsAvailable(t))) return
    const {queue, dlq, final} = await chain(2)
    await seed(queue, dlq, ['a'])
    const result = await runBq(['dlq', 'ls', '--match', `${queue}*`, '-b', sqsUrl, '--json'])
    const output = jsonOutput(result.stdout)
    assert.ok(output.ok, result.stdout)
    const dlqs = (output.result as {dlqs: Array<Record<string, unknown>>}).dlqs
    assert.deepEqual(dlqs.map((d) => [d.dlq, d.kind, d.depth, d.sampled, d.original_queues]), [[dlq, 'convention', 2, 0, [queue]], [final, 'native', 0, 0, [dlq]]])
    const counts = await rawSqs().send(new GetQueueAttributesCommand({QueueUrl: await queueUrl(dlq), AttributeNames: ['ApproximateNumberOfMessagesNotVisible']}))
    assert.equal(counts.Attributes?.ApproximateNumberOfMessagesNotVisible, '0', 'dlq ls received nothing')
  })
})
