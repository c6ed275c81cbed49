// bench/sqs: bq dlq redrive against a raw-SDK baseline on the same SQS endpoint, same run.
// Usage: node bench/sqs/bench.js [N=100000] [BASELINE_WORKERS=4]   (run `npm run build` first)
// The URL is BQ_TEST_SQS_URL, default ElasticMQ on 127.0.0.1:9324 (test/brokers/brokers.sh start sqs).
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {DeleteQueueCommand, GetQueueUrlCommand, SQSClient} from '@aws-sdk/client-sqs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const n = Number(process.argv[2] ?? 100_000)
const workers = process.argv[3] ?? '4'
const url = process.env.BQ_TEST_SQS_URL ?? 'sqs://us-east-1?endpoint=http://127.0.0.1:9324'
// ElasticMQ takes any credentials; real AWS uses the caller's own.
const env = {AWS_ACCESS_KEY_ID: 'bq-bench', AWS_SECRET_ACCESS_KEY: 'bq-bench', AWS_REGION: 'us-east-1', ...process.env}

/** ElasticMQ holds every message in its heap: each run's queues go before the next run seeds. */
async function dropQueues(names) {
  const parsed = new URL(url)
  const client = new SQSClient({region: parsed.hostname || undefined, endpoint: parsed.searchParams.get('endpoint') ?? undefined, credentials: {accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY}})
  for (const name of names) {
    try {
      const {QueueUrl} = await client.send(new GetQueueUrlCommand({QueueName: name}))
      await client.send(new DeleteQueueCommand({QueueUrl}))
    } catch {
      // Already gone.
    }
  }
  client.destroy()
}

function timed(args) {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %M', ...args], {encoding: 'utf8', env, maxBuffer: 1 << 26})
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed: ${result.stderr}`)
  const [seconds, kb] = result.stderr.trim().split('\n').pop().split(' ').map(Number)
  return {seconds, rssMiB: kb / 1024}
}
function seed(queue, dlq) {
  const result = spawnSync('node', [path.join(here, 'seed.js'), url, queue, dlq, String(n)], {stdio: 'inherit', env})
  if (result.status !== 0) throw new Error('seeding failed')
}

const stamp = Date.now().toString(36)
const rows = []
const baseQueue = `bench-base-${stamp}`
seed(baseQueue, `${baseQueue}-dlq`)
rows.push([`raw SDK baseline (${workers} workers: receive 10, send batch, delete batch)`, timed(['node', path.join(here, 'baseline.js'), url, baseQueue, `${baseQueue}-dlq`, workers])])
await dropQueues([baseQueue, `${baseQueue}-dlq`])
const queue = `bench-bq-${stamp}`
seed(queue, `${queue}-dlq`)
rows.push(['bq dlq redrive', timed(['node', path.join(root, 'bin', 'run.js'), 'dlq', 'redrive', queue, '--dlq', `${queue}-dlq`, '--yes', '-b', url])])
await dropQueues([queue, `${queue}-dlq`])

const lines = [`### bench/sqs — ${new Date().toISOString().slice(0, 10)}, ${n.toLocaleString('en')} messages, ${url}`, '', '| run | time | messages/s | peak RSS |', '| --- | ---: | ---: | ---: |']
for (const [name, r] of rows) lines.push(`| ${name} | ${r.seconds.toFixed(2)} s | ${Math.round(n / r.seconds).toLocaleString('en')} | ${r.rssMiB.toFixed(0)} MiB |`)
lines.push('', `bq / baseline rate: **${(rows[0][1].seconds / rows[1][1].seconds).toFixed(2)}×**.`)
console.log(lines.join('\n'))
