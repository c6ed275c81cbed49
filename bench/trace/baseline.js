// The raw-client floor for finding an id in Redis: SCAN the lists under PREFIX, then read each with
// pipelined LRANGE pages of 1,000 (8 pages per round trip) and test each element's bytes for the
// id. No frames, no decoding, no report. Prints how many elements held it.
// Usage: node bench/trace/baseline.js REDIS_URL PREFIX ID
import Redis from 'ioredis'

const [url, prefix, id] = process.argv.slice(2)
const redis = new Redis(url)
const needle = Buffer.from(id)
const keys = []
let cursor = '0'
do {
  const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000, 'TYPE', 'list')
  keys.push(...found)
  cursor = next
} while (cursor !== '0')
let hits = 0
let scanned = 0
for (const key of keys) {
  for (let offset = 0; ; offset += 8000) {
    const pipeline = redis.pipeline()
    for (let page = 0; page < 8; page++) pipeline.lrangeBuffer(key, offset + page * 1000, offset + page * 1000 + 999)
    const pages = (await pipeline.exec()).map(([, value]) => value)
    let last = 0
    for (const elements of pages) {
      for (const element of elements) if (element.includes(needle)) hits++
      scanned += elements.length
      last = elements.length
    }
    if (last < 1000) break
  }
}
console.log(`${hits} of ${scanned}`)
await redis.quit()
