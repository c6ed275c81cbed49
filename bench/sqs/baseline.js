// The raw-SDK floor for an SQS redrive: W workers, each receiving 10, sending them as one batch
// to the target, then deleting them as one batch, until the DLQ is empty.
// Usage: node bench/sqs/baseline.js URL QUEUE DLQ [WORKERS=4]
import {CreateQueueCommand, DeleteMessageBatchCommand, GetQueueUrlCommand, ReceiveMessageCommand, SendMessageBatchCommand, SQSClient} from '@aws-sdk/client-sqs'

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
const [url, queue, dlq, workers = '4'] = process.argv.slice(2)
const parsed = new URL(url)
const client = new SQSClient({region: parsed.hostname || undefined, endpoint: parsed.searchParams.get('endpoint') ?? undefined})
const source = (await client.send(new GetQueueUrlCommand({QueueName: dlq}))).QueueUrl
const target = (await client.send(new CreateQueueCommand({QueueName: queue}))).QueueUrl
let moved = 0

async function worker() {
  for (;;) {
    let {Messages: messages = []} = await client.send(new ReceiveMessageCommand({QueueUrl: source, MaxNumberOfMessages: 10, VisibilityTimeout: 60, MessageAttributeNames: ['All']}))
    if (messages.length === 0) {
      // Confirm with a long poll before this worker stops.
      ;({Messages: messages = []} = await client.send(new ReceiveMessageCommand({QueueUrl: source, MaxNumberOfMessages: 10, VisibilityTimeout: 60, WaitTimeSeconds: 1, MessageAttributeNames: ['All']})))
      if (messages.length === 0) return
    }
    const sent = await client.send(new SendMessageBatchCommand({QueueUrl: target, Entries: messages.map((m, i) => ({Id: String(i), MessageBody: m.Body, MessageAttributes: m.MessageAttributes}))}))
    if ((sent.Failed ?? []).length > 0) throw new Error(`send failed: ${JSON.stringify(sent.Failed)}`)
    const deleted = await client.send(new DeleteMessageBatchCommand({QueueUrl: source, Entries: messages.map((m, i) => ({Id: String(i), ReceiptHandle: m.ReceiptHandle}))}))
    if ((deleted.Failed ?? []).length > 0) throw new Error(`delete failed: ${JSON.stringify(deleted.Failed)}`)
    moved += messages.length
  }
}

await Promise.all(Array.from({length: Number(workers)}, worker))
console.log(moved)
client.destroy()
