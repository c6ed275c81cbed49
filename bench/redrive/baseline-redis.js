// The raw-client floor for a Redis redrive: pop 1000 at a time and push them to the target,
// pipelined, with no reset, no crash safety and no report. Usage: node baseline-redis.js URL QUEUE
import Redis from 'ioredis'

const [url, queue] = process.argv.slice(2)
const redis = new Redis(url)
let moved = 0
while (true) {
  const bodies = await redis.lpopBuffer(`${queue}.dlq`, 1000)
  if (!bodies || bodies.length === 0) break
  await redis.rpush(queue, ...bodies)
  moved += bodies.length
}
console.log(moved)
await redis.quit()
