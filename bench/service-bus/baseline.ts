/**
 * Raw-SDK baseline for a Service Bus redrive: peek-lock receive a batch from <queue>.dlq, send it
 * as one batch to <queue>, complete the batch; repeat until a receive comes back empty.
 * No envelope decoding or reset, no selection: the floor bq's redrive is compared with.
 * Usage: node --import tsx bench/service-bus/baseline.ts <connection string> <queue>
 */
import {ServiceBusClient} from '@azure/service-bus'

const [connectionString, queue] = process.argv.slice(2)
const client = new ServiceBusClient(connectionString)
const receiver = client.createReceiver(`${queue}.dlq`, {skipParsingBodyAsJson: true})
const sender = client.createSender(queue)
let moved = 0
for (;;) {
  const batch = await receiver.receiveMessages(500, {maxWaitTimeInMs: 3000})
  if (batch.length === 0) break
  await sender.sendMessages(batch.map((m) => ({body: m.body as Buffer, subject: m.subject, correlationId: m.correlationId, messageId: m.messageId, contentType: m.contentType, applicationProperties: m.applicationProperties})))
  await Promise.all(batch.map((m) => receiver.completeMessage(m)))
  moved += batch.length
}
await client.close()
process.stdout.write(`${moved}\n`)
