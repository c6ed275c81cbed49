/**
 * The URN where a JMS consumer looks: Artemis's AMQP→JMS conversion maps the AMQP `subject` to
 * JMSType (the `x-opt-jms-type` annotation of the spec is not read), so bq writes the URN in both.
 * A JMS client (the Artemis JMS client over CORE, jms-client.ts) consumes what bq published,
 * redrove and replayed, with a JMS selector on JMSType.
 */
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, describe, test} from 'node:test'

import rhea from 'rhea'

import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {jsonResult, runBq} from '../../support/cli.js'
import {jmsConsume} from './jms-client.js'
import {RawClient, destroyQueues} from './support.js'

const artemisUrl = process.env.BQ_TEST_ARTEMIS_URL ?? 'artemis://bq:bq@127.0.0.1:5673'
const parsed = new URL(artemisUrl)
const created = 'urn:babel:orders:created'
const workDir = mkdtempSync(path.join(tmpdir(), 'bq-jms-type-'))
const made: string[] = []

after(async () => {
  rmSync(workDir, {recursive: true, force: true})
  if (made.length > 0) await destroyQueues(artemisUrl, made).catch(() => undefined)
})

function envelope(queue: string, n: number, deadLetter: boolean): string {
  const id = `7d0c5e1a-0000-4000-8000-00000000000${n}`
  const dead = deadLetter ? `,"dead_letter":{"reason":"failed","error":"boom","failed_at":1764489660000,"original_queue":"${queue}","attempts":3,"lang":"java"}` : ''
  return `{"job":"${created}","trace_id":"trace-${n}","data":{"order_id":${n}},"meta":{"id":"${id}","queue":"${queue}","lang":"java","schema_version":1,"created_at":1764489600000},"attempts":${deadLetter ? 3 : 0}${dead}}`
}

describe('artemis: JMSType carries the URN', () => {
  test('a JMS consumer sees JMSType and selects on it for published, redriven and replayed messages', async (t) => {
    if (!(await requireBroker(t, 'Artemis', parsed.hostname, Number(parsed.port || 5672)))) return
    const queue = uniqueQueue('jmstype')
    const dlq = `${queue}.dlq`
    made.push(queue, dlq)

    for (const [urn, count] of [[created, '2'], ['urn:babel:orders:cancelled', '1']]) {
      const published = await runBq(['publish', urn, '-d', '{"order_id":1}', '-q', queue, '--count', count, '-b', artemisUrl])
      assert.equal(published.code, 0, published.stderr)
    }
    // Two dead letters from other producers: one with the URN only in the subject (a JMS
    // producer's JMSType), one with it only in the annotation (what bq wrote before).
    const raw = await RawClient.open(artemisUrl)
    try {
      await raw.send(dlq, [
        {durable: true, subject: created, body: rhea.message.data_section(Buffer.from(envelope(queue, 1, true)))},
        {durable: true, message_annotations: {'x-opt-jms-type': created}, body: rhea.message.data_section(Buffer.from(envelope(queue, 2, true)))},
      ])
    } finally {
      raw.close()
    }
    const redriven = await runBq(['dlq', 'redrive', queue, '--yes', '--json', '-b', artemisUrl])
    assert.equal(redriven.code, 0, redriven.stderr)
    assert.equal((jsonResult(redriven.stdout).counts as {redriven: number}).redriven, 2)
    const file = path.join(workDir, 'replay.jsonl')
    writeFileSync(file, envelope(queue, 3, false) + '\n')
    const replayed = await runBq(['replay', file, '--to', queue, '--yes', '-b', artemisUrl])
    assert.equal(replayed.code, 0, replayed.stderr)

    const seen = await jmsConsume(artemisUrl, queue, `JMSType = '${created}'`, 10)
    assert.equal(seen.length, 5, JSON.stringify(seen))
    for (const message of seen) assert.equal(message.jms_type, created)
    const traces = seen.map((message) => message.correlation_id).filter((id) => id?.startsWith('trace-')).sort()
    assert.deepEqual(traces, ['trace-1', 'trace-2', 'trace-3'], 'the redriven and replayed messages are among them')

    // The selector left the other URN alone.
    const rest = jsonResult((await runBq(['peek', queue, '--json', '-b', artemisUrl])).stdout)
    assert.deepEqual((rest.messages as Array<{urn: string}>).map((m) => m.urn), ['urn:babel:orders:cancelled'])
  })
})
