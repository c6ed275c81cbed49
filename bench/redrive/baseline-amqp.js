// The raw-client floor for a RabbitMQ redrive: consume with a 1000 prefetch, publish on a
// confirm channel, ack each batch once its publishes are confirmed. Usage: node baseline-amqp.js URL QUEUE
import amqp from 'amqplib'

const [url, queue] = process.argv.slice(2)
const connection = await amqp.connect(url, {noDelay: true})
const channel = await connection.createConfirmChannel()
const {messageCount} = await channel.checkQueue(`${queue}.dlq`)
await channel.assertQueue(queue, {durable: true})
await channel.prefetch(1000)
let moved = 0
let pending = []
await new Promise((resolve, reject) => {
  channel.consume(`${queue}.dlq`, (message) => {
    channel.publish('', queue, message.content, {persistent: true, ...message.properties})
    pending.push(message)
    moved++
    if (pending.length >= 500 || moved === messageCount) {
      const batch = pending
      pending = []
      channel.waitForConfirms().then(() => {
        channel.ack(batch[batch.length - 1], true)
        if (moved === messageCount) resolve()
      }, reject)
    }
  })
  if (messageCount === 0) resolve()
})
console.log(moved)
await channel.close()
await connection.close()
