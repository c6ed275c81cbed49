/**
 * The Lua scripts behind the Redis drain. Each runs atomically on the server, and every one
 * that touches a drain's lists first checks that the caller still holds the drain lock
 * (KEYS[1] holds ARGV[1]): a run that lost its lock can change nothing.
 *
 * Key layout for a queue list K: `K:processing` (the binding's reservation list), `K:bq-held`
 * (released messages, kept in original order until the run ends), `K:bq-lock`, and, on a
 * Laravel layout, `K:notify` (Laravel's wake-up list: one entry per element of K). Scripts that
 * change K's length take that key as an optional last KEYS entry and keep it in step.
 */
import {createHash} from 'node:crypto'
import {Command} from 'ioredis'

import type {RedisClient} from './cluster.js'

export interface Script {
  source: string
  sha: string
}

export function script(body: string): Script {
  const source = body.trim()
  return {source, sha: createHash('sha1').update(source).digest('hex')}
}

const FENCE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('BQLOCK drain lock lost')
end
`

/**
 * The most values one RPUSH inside a script carries: Lua's unpack() puts them all on its C stack,
 * which holds 8000 at most.
 */
const PUSH_RUN = 1000

/** Lua: pushes `n` wake-up entries ("1", as Laravel's push does) onto a notify list, PUSH_RUN at a time. */
const NOTIFY = `
local function notify(key, n)
  for i = 1, n, ${PUSH_RUN} do
    local ones = {}
    for j = 1, math.min(${PUSH_RUN}, n - i + 1) do ones[j] = '1' end
    redis.call('RPUSH', key, unpack(ones))
  end
end
`

/**
 * KEYS: lock, K, K:processing[, K:notify]. ARGV: token, n. Moves up to n messages from K's head to the tail
 * of processing, in order; returns them. One read, a push per PUSH_RUN messages and one trim
 * instead of a command per message: the script runs atomically either way.
 */
export const RESERVE = script(`${FENCE}
local want = tonumber(ARGV[2])
if want < 1 then return {} end
local out = redis.call('LRANGE', KEYS[2], 0, want - 1)
local n = #out
if n == 0 then return out end
for i = 1, n, ${PUSH_RUN} do
  redis.call('RPUSH', KEYS[3], unpack(out, i, math.min(i + ${PUSH_RUN - 1}, n)))
end
redis.call('LTRIM', KEYS[2], n, -1)
if KEYS[4] then redis.call('LPOP', KEYS[4], n) end
return out
`)

/** KEYS: lock, K:processing. ARGV: token, bodies… Removes each; returns how many were not found. */
export const ACK = script(`${FENCE}
local n = #ARGV - 1
-- Fast path: the acked bodies are exactly the head of processing, in order.
local head = redis.call('LRANGE', KEYS[2], 0, n - 1)
local prefix = #head == n
if prefix then
  for i = 1, n do
    if head[i] ~= ARGV[1 + i] then prefix = false break end
  end
end
if prefix then
  redis.call('LTRIM', KEYS[2], n, -1)
  return 0
end
local missing = 0
for i = 2, #ARGV do
  if redis.call('LREM', KEYS[2], 1, ARGV[i]) == 0 then missing = missing + 1 end
end
return missing
`)

/**
 * KEYS: lock, K:processing, K:bq-held. ARGV: token, then (index, body) pairs. Moves each body
 * from processing into the held list at `index`, so the held list stays in original order even
 * when messages are released out of order. Returns how many were not found in processing.
 */
export const RELEASE = script(`${FENCE}
local missing = 0
for i = 2, #ARGV, 2 do
  local at = tonumber(ARGV[i])
  local body = ARGV[i + 1]
  if redis.call('LREM', KEYS[2], 1, body) == 0 then
    missing = missing + 1
  else
    local len = redis.call('LLEN', KEYS[3])
    if at >= len then
      redis.call('RPUSH', KEYS[3], body)
    else
      local tail = redis.call('RPOP', KEYS[3], len - at)
      redis.call('RPUSH', KEYS[3], body)
      for j = #tail, 1, -1 do redis.call('RPUSH', KEYS[3], tail[j]) end
    end
  end
end
return missing
`)

/**
 * KEYS: lock, K:processing, target list[, target:notify]. ARGV: token, n, n source bodies, outgoing bodies…
 * All or nothing: checks that the target is a list and that every source is still reserved
 * before changing anything (a script that fails half way is not rolled back), then pushes the
 * outgoing copies and removes the sources in the same atomic step, copies first.
 */
export const MOVE = script(`${FENCE}${NOTIFY}
local n = tonumber(ARGV[2])
local kind = redis.call('TYPE', KEYS[3])['ok']
if kind ~= 'list' and kind ~= 'none' then
  return redis.error_reply('WRONGTYPE the target ' .. KEYS[3] .. ' holds a ' .. kind .. ', not a list')
end
-- Fast path: the sources are exactly the head of processing, in order (a batch whose every
-- message was selected). Then one LTRIM replaces n LREM scans.
local head = {}
if n > 0 then head = redis.call('LRANGE', KEYS[2], 0, n - 1) end
local prefix = #head == n
if prefix then
  for i = 1, n do
    if head[i] ~= ARGV[2 + i] then prefix = false break end
  end
end
if not prefix then
  local need = {}
  for i = 3, 2 + n do need[ARGV[i]] = (need[ARGV[i]] or 0) + 1 end
  for body, count in pairs(need) do
    local found = redis.call('LPOS', KEYS[2], body, 'COUNT', count)
    if #found < count then
      return redis.error_reply('BQMISSING a message to move is no longer in the processing list')
    end
  end
end
for i = 3 + n, #ARGV, ${PUSH_RUN} do
  redis.call('RPUSH', KEYS[3], unpack(ARGV, i, math.min(i + ${PUSH_RUN - 1}, #ARGV)))
end
if KEYS[4] then notify(KEYS[4], #ARGV - 2 - n) end
if prefix then
  redis.call('LTRIM', KEYS[2], n, -1)
else
  for i = 3, 2 + n do redis.call('LREM', KEYS[2], 1, ARGV[i]) end
end
return n
`)

/**
 * KEYS: lock, K, K:processing, K:bq-held[, K:notify]. ARGV: token, then (op, value) pairs, already in
 * descending original order: ('H', count) moves `count` messages from the held list's tail to
 * K's head; ('P', body) moves one reserved body from processing to K's head. Pushing the last
 * message first leaves them at the head of K in their original order. Returns the number of
 * 'P' bodies not found.
 */
export const RESTORE = script(`${FENCE}${NOTIFY}
local missing = 0
local added = 0
for i = 2, #ARGV, 2 do
  if ARGV[i] == 'H' then
    for _ = 1, tonumber(ARGV[i + 1]) do
      if redis.call('LMOVE', KEYS[4], KEYS[2], 'RIGHT', 'LEFT') then added = added + 1 else missing = missing + 1 end
    end
  else
    if redis.call('LREM', KEYS[3], -1, ARGV[i + 1]) == 1 then
      redis.call('LPUSH', KEYS[2], ARGV[i + 1])
      added = added + 1
    else
      missing = missing + 1
    end
  end
end
if KEYS[5] then notify(KEYS[5], added) end
return missing
`)

/**
 * KEYS: lock, K, K:processing, K:bq-held[, K:notify]. ARGV: token, limit. Crash recovery: returns up to
 * `limit` messages to K's head — all of processing, then all of held — popping each list from
 * its tail so the result reads held…, processing…, K… (a run releases messages it has already
 * passed, so held ones come first). Returns how many moved; call again until it returns < limit.
 */
export const RECOVER = script(`${FENCE}${NOTIFY}
local limit = tonumber(ARGV[2])
local moved = 0
while moved < limit and redis.call('LMOVE', KEYS[3], KEYS[2], 'RIGHT', 'LEFT') do moved = moved + 1 end
while moved < limit and redis.call('LMOVE', KEYS[4], KEYS[2], 'RIGHT', 'LEFT') do moved = moved + 1 end
if KEYS[5] then notify(KEYS[5], moved) end
return moved
`)

/** KEYS: lock. ARGV: token, ttl ms. Extends the lock if still ours; 1 or 0. */
export const LOCK_REFRESH = script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`)

/** KEYS: lock. ARGV: token. Deletes the lock if it holds exactly this value; 1 or 0. */
export const LOCK_DELETE = script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

/** Runs a script by its digest, sending the source once when the server does not know it. */
export async function runScript(client: RedisClient, s: Script, keys: string[], args: Array<string | Buffer | number>): Promise<unknown> {
  try {
    return await client.sendCommand(new ScriptCall('evalsha', [s.sha, keys.length, ...keys, ...args]))
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error
    return client.sendCommand(new ScriptCall('eval', [s.source, keys.length, ...keys, ...args]))
  }
}

/**
 * A script call (replies as Buffers) whose request is encoded in one pass: a drain's calls carry
 * a thousand bodies or more, and ioredis's own encoder makes two strings and a list entry per
 * argument before it copies them together.
 */
class ScriptCall extends Command {
  override toWritable(): Buffer {
    // The constructor flattened the arguments and turned numbers into strings.
    return encodeCommand(this.name, this.args as Array<string | Buffer>)
  }
}

/** The RESP request for a command: an array of bulk strings (numbers as their decimal text). */
export function encodeCommand(name: string, args: ReadonlyArray<string | Buffer | number>): Buffer {
  const parts = new Array<Buffer>(args.length)
  let size = 0
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    const bytes = Buffer.isBuffer(arg) ? arg : Buffer.from(String(arg))
    parts[i] = bytes
    size += bytes.length + decimalLength(bytes.length) + 5
  }
  const head = `*${args.length + 1}\r\n$${Buffer.byteLength(name)}\r\n${name}\r\n`
  const out = Buffer.allocUnsafe(Buffer.byteLength(head) + size)
  let at = out.write(head, 0)
  for (const bytes of parts) {
    out[at++] = 0x24 // $
    at = writeDecimal(out, at, bytes.length)
    out[at++] = 0x0d
    out[at++] = 0x0a
    at += bytes.copy(out, at)
    out[at++] = 0x0d
    out[at++] = 0x0a
  }
  return out
}

function decimalLength(n: number): number {
  let digits = 1
  while (n >= 10) {
    n = Math.floor(n / 10)
    digits++
  }
  return digits
}

function writeDecimal(out: Buffer, at: number, n: number): number {
  const end = at + decimalLength(n)
  for (let i = end - 1; i >= at; i--) {
    out[i] = 0x30 + (n % 10)
    n = Math.floor(n / 10)
  }
  return end
}
