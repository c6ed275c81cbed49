/**
 * bench/service-bus: `bq dlq redrive` against a raw-SDK baseline (baseline.ts), both against bq's
 * Service Bus test server (test/brokers/service-bus/server/, run as its own process), same machine, same run.
 * Usage: node --import tsx bench/service-bus/bench.ts [N=100000]
 */
import {spawn} from 'node:child_process'
import path from 'node:path'
import {createInterface} from 'node:readline'
import {fileURLToPath} from 'node:url'

import {openBroker} from '../../src/lib/brokers/registry.js'
import {annotate, fieldsOf, make} from '../../src/lib/envelope/index.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const n = Number(process.argv[2] ?? 100_000)

const server = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'test', 'brokers', 'service-bus', 'server', 'main.ts')], {cwd: root, stdio: ['ignore', 'pipe', 'inherit']})
const url = await new Promise<string>((resolve) => createInterface({input: server.stdout}).once('line', resolve))

async function seed(queue: string): Promise<void> {
  const adapter = await openBroker(url)
  try {
    for (let start = 0; start < n; start += 1000) {
      const batch = []
      for (let i = start; i < Math.min(n, start + 1000); i++) {
        const env = annotate(make('urn:babel:orders:created', `{"order_id":${i + 1},"amount":99.90}`, {queue}), {reason: 'failed', originalQueue: queue, error: 'boom', failedAt: 1749132730000, attempts: 3})
        batch.push({body: env.toBuffer(), fields: fieldsOf(env)})
      }
      await adapter.publish(`${queue}.dlq`, batch)
    }
  } finally {
    await adapter.close()
  }
}

function timed(args: string[]): Promise<{seconds: number; rssMiB: number}> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', '%e %M', ...args], {cwd: root, stdio: ['ignore', 'ignore', 'pipe']})
    let stderr = ''
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${args.join(' ')} failed: ${stderr}`))
      const [seconds, kb] = stderr.trim().split('\n').pop()!.split(' ').map(Number)
      resolve({seconds, rssMiB: kb / 1024})
    })
  })
}

try {
  const stamp = Date.now().toString(36)
  const rows: Array<[string, {seconds: number; rssMiB: number}]> = []
  const base = `bench-base-${stamp}`
  await seed(base)
  rows.push(['raw SDK baseline', await timed([process.execPath, '--import', 'tsx', path.join(here, 'baseline.ts'), url, base])])
  const queue = `bench-bq-${stamp}`
  await seed(queue)
  rows.push(['bq dlq redrive', await timed([process.execPath, path.join(root, 'bin', 'run.js'), 'dlq', 'redrive', queue, '--yes', '-b', url])])
  const check = await openBroker(url)
  const left = await check.count(`${queue}.dlq`)
  const moved = await check.count(queue)
  await check.close()
  const lines = [`### bench/service-bus — ${new Date().toISOString().slice(0, 10)}, ${n.toLocaleString('en')} messages (test server)`, '', '| run | time | messages/s | peak RSS |', '| --- | ---: | ---: | ---: |']
  for (const [name, r] of rows) lines.push(`| ${name} | ${r.seconds.toFixed(2)} s | ${Math.round(n / r.seconds).toLocaleString('en')} | ${r.rssMiB.toFixed(0)} MiB |`)
  lines.push('', `bq / baseline rate: **${(rows[0][1].seconds / rows[1][1].seconds).toFixed(2)}×**; after bq: ${moved} on ${queue}, ${left} left on the DLQ.`)
  console.log(lines.join('\n'))
} finally {
  server.kill('SIGTERM')
}
