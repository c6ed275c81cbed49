// The raw-rhea floor for an Artemis redrive: receive from <queue>.dlq with 1000 credits, send
// each message to <queue> as it is (same sections, unsettled), and accept the original once the
// copy is settled as accepted. No decoding, no reset, no checks. Usage: node baseline.js URL QUEUE N
import rhea from 'rhea'

const [rawUrl, queue, n] = process.argv.slice(2)
const total = Number(n)
const url = new URL(rawUrl)
const container = rhea.create_container()
container.on('error', (error) => {
  console.error(error.message)
  process.exit(1)
})
const connection = container.connect({host: url.hostname, port: Number(url.port || 5672), username: decodeURIComponent(url.username), password: decodeURIComponent(url.password), reconnect: false})
await new Promise((resolve, reject) => {
  connection.once('connection_open', resolve)
  connection.once('disconnected', (context) => reject(context.error ?? new Error('disconnected')))
})
const sender = connection.open_sender({target: {address: queue, capabilities: ['queue']}, snd_settle_mode: 0})
await new Promise((resolve) => sender.once('sendable', resolve))
const receiver = connection.open_receiver({source: {address: `${queue}.dlq`, capabilities: ['queue']}, credit_window: 0, autoaccept: false})
await new Promise((resolve) => receiver.once('receiver_open', resolve))

const CREDIT = 1000
let moved = 0
const waiting = [] // received, not yet sent (the sender had no credit)
const sources = new Map() // outgoing delivery → incoming delivery
function pump() {
  while (waiting.length > 0 && sender.sendable()) {
    const {message, delivery} = waiting.shift()
    sources.set(sender.send(message), delivery)
  }
}
await new Promise((resolve, reject) => {
  receiver.on('message', (context) => {
    waiting.push({message: context.message, delivery: context.delivery})
    pump()
  })
  sender.on('sendable', pump)
  sender.on('settled', (context) => {
    const source = sources.get(context.delivery)
    sources.delete(context.delivery)
    if (context.delivery.remote_state?.constructor?.composite_type !== 'accepted') return reject(new Error('a copy was not accepted'))
    source.accept()
    moved++
    receiver.add_credit(1)
    pump()
    if (moved === total) resolve()
  })
  receiver.add_credit(Math.min(CREDIT, total))
  if (total === 0) resolve()
})
console.log(moved)
// Let the last accepts go out before closing.
await new Promise((resolve) => setTimeout(resolve, 100))
connection.close()
await new Promise((resolve) => connection.once('connection_close', resolve))
process.exit(0)
