/**
 * What Redis consumers have taken and not finished, and returning it (`bq inflight ls`,
 * `bq inflight return`). Two layouts (url.ts decides which):
 *
 * - SDKs: `<list>:processing`, a list each consumer moves an element into as it takes it
 *   (BLMOVE … LEFT RIGHT appends, so index 0 is the oldest taken) and LREMs on ack.
 * - Laravel (`queues:` prefix or notify=on): `<list>:reserved`, a sorted set whose score is the
 *   reservation's expiry in Unix seconds, and `<list>:delayed`, scored by the time a job is due.
 *
 * A return moves an element to the list's head (LPUSH: where the SDKs' LEFT-popping consumers
 * take next, and where recover and redrive put messages back) by one script per page that
 * removes each exact element once (LREM of one copy / ZREM) and pushes it only when that removal
 * happened: what a consumer acknowledged meanwhile is left alone. Each element is always in one
 * place, so a killed run leaves nothing to recover: a rerun goes on.
 */
import type {InflightElement, InflightGauge, InflightReport, ReturnablePage} from '../adapter.js'
import {UsageError} from '../../errors.js'
import {isCluster, sameSlot, type RedisClient} from './cluster.js'
import {messageOf} from './frames.js'
import {runScript, script} from './scripts.js'

export type InflightLayout = 'sdk' | 'laravel'

export interface InflightKeys {
  layout: InflightLayout
  list: string
  /** Where taken elements wait: `<list>:processing` (SDK) or `<list>:reserved` (Laravel). */
  taken: string
  /** Laravel's `<list>:delayed`. */
  delayed?: string
  /** Laravel's `<list>:notify`, kept in step when the URL says so. */
  notify?: string
}

/** A Laravel score is Unix seconds; one past 10^11 can only be milliseconds already. */
export function scoreToMs(score: number): number {
  return score < 1e11 ? Math.round(score * 1000) : Math.round(score)
}

export function inflightKeys(list: string, layout: InflightLayout, notify: boolean): InflightKeys {
  const keys: InflightKeys = layout === 'sdk' ? {layout, list, taken: `${list}:processing`} : {layout, list, taken: `${list}:reserved`, delayed: `${list}:delayed`}
  if (notify) keys.notify = `${list}:notify`
  return keys
}

const HELP = {
  processing: 'taken by an SDK consumer (moved to <queue>:processing) and not yet acknowledged; no SDK returns it by itself',
  reserved: 'reserved by a Laravel worker (<queue>:reserved); a Laravel worker polling this queue moves it back to the tail once its retry_after has passed',
  delayed: 'waiting in <queue>:delayed until it is due (released with a delay, or pushed with one)',
}

export async function readInflight(client: RedisClient, keys: InflightKeys, limit: number): Promise<InflightReport> {
  if (keys.layout === 'sdk') {
    const processing = await client.llen(keys.taken)
    const stored = limit > 0 && processing > 0 ? await client.lrangeBuffer(keys.taken, 0, limit - 1) : []
    return {gauges: [{name: 'processing', value: processing, help: HELP.processing}], elements: stored.map((value, i) => element(value, i, 'processing'))}
  }
  const delayedKey = keys.delayed as string
  const [reserved, delayed] = [await client.zcard(keys.taken), await client.zcard(delayedKey)]
  const gauges: InflightGauge[] = [
    {name: 'reserved', value: reserved, help: HELP.reserved},
    {name: 'delayed', value: delayed, help: HELP.delayed},
  ]
  const elements = limit > 0 && reserved > 0 ? await scored(client, keys.taken, 0, limit - 1, 'reserved') : []
  const room = limit - elements.length
  if (room > 0 && delayed > 0) elements.push(...(await scored(client, delayedKey, 0, room - 1, 'delayed')))
  return {gauges, elements}
}

/** One page of the taken elements, ranks [before - limit, before), see BrokerAdapter.returnableInflight. */
export async function readReturnable(client: RedisClient, keys: InflightKeys, queue: string, before: number | undefined, limit: number): Promise<ReturnablePage> {
  returnKeys(client, keys, queue)
  // Pages go from the newest down by index (rank): returning a page moves only elements above
  // the next page's range, so the next page's positions stay where they were.
  const end = before ?? (keys.layout === 'sdk' ? await client.llen(keys.taken) : await client.zcard(keys.taken))
  const start = Math.max(0, end - limit)
  if (end <= 0) return {elements: []}
  const elements =
    keys.layout === 'sdk'
      ? (await client.lrangeBuffer(keys.taken, start, end - 1)).map((value, i) => element(value, start + i, 'processing'))
      : await scored(client, keys.taken, start, end - 1, 'reserved')
  return {elements, ...(start > 0 ? {next: start} : {})}
}

/**
 * The return script, for a removal command: KEYS taken place, queue list[, notify]; ARGV the
 * elements, oldest taken first. From the last to the first: removes one exact copy from where it
 * was taken and, only if one was there, pushes it on the queue's head, so the page ends at the
 * head in taken order. Returns 1/0 per element.
 */
const returnScript = (remove: string) =>
  script(`
local moved = {}
for i = #ARGV, 1, -1 do
  if redis.call(${remove}, ARGV[i]) == 1 then
    redis.call('LPUSH', KEYS[2], ARGV[i])
    if KEYS[3] then redis.call('RPUSH', KEYS[3], '1') end
    moved[i] = 1
  else
    moved[i] = 0
  end
end
return moved
`)

/**
 * The SDKs' processing list. LREM -1 looks from the tail: pages go newest first, so the element
 * is near there (any copy of the same bytes is the same element to a consumer).
 */
const RETURN_PROCESSING = returnScript(`'LREM', KEYS[1], -1`)
/** Laravel's reserved set: ZREM of the exact member. */
const RETURN_RESERVED = returnScript(`'ZREM', KEYS[1]`)

/** The keys one return script touches; on a cluster they must share a hash slot, or the return is refused before anything moves. */
function returnKeys(client: RedisClient, keys: InflightKeys, queue: string): string[] {
  const scriptKeys = [keys.taken, keys.list, ...(keys.notify === undefined ? [] : [keys.notify])]
  if (isCluster(client) && !sameSlot(scriptKeys)) {
    throw new UsageError(`${scriptKeys.join(', ')} are in different hash slots of the Redis Cluster, so bq cannot move an element between them in one script: hash-tag the queue name ({${queue.replace(/[{}]/g, '')}}), as the SDKs and Laravel on a cluster need anyway; nothing was changed`)
  }
  return scriptKeys
}

export async function returnElements(client: RedisClient, keys: InflightKeys, queue: string, elements: InflightElement[]): Promise<boolean[]> {
  const scriptKeys = returnKeys(client, keys, queue)
  if (elements.length === 0) return []
  const values = elements.map((e) => e.stored ?? e.body)
  const reply = (await runScript(client, keys.layout === 'sdk' ? RETURN_PROCESSING : RETURN_RESERVED, scriptKeys, values)) as unknown[]
  return elements.map((_, i) => Number(reply[i]) === 1)
}

function element(stored: Buffer, index: number, place: string): InflightElement {
  return {...messageOf(stored, String(index)), place}
}

async function scored(client: RedisClient, key: string, start: number, stop: number, place: 'reserved' | 'delayed'): Promise<InflightElement[]> {
  const flat = await client.zrangeBuffer(key, start, stop, 'WITHSCORES')
  const out: InflightElement[] = []
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const at = scoreToMs(Number(flat[i + 1].toString()))
    out.push({...element(flat[i], start + i / 2, place), ...(place === 'reserved' ? {expiresAt: at} : {dueAt: at})})
  }
  return out
}
