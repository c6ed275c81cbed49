/**
 * When a record may carry `meta.created_at` as its timestamp (the binding's projection) without
 * being lost or refused.
 *
 * Kafka deletes by record timestamp: once a segment rolls (and a record with a current timestamp
 * arriving after old ones rolls it at once, since segment.ms counts from the first timestamp),
 * every segment whose newest timestamp is older than retention.ms is deleted at the next
 * retention check, minutes later. A redrive or replay of envelopes created longer ago than the
 * target's retention would hand them to Kafka and see them vanish. Brokers also refuse
 * timestamps outside message.timestamp.before.max.ms / after.max.ms (after: one hour by default).
 *
 * So bq stamps meta.created_at only while the record would still live a good while (half the
 * retention, at most a day, short of it) and the broker accepts it; otherwise it stamps the
 * current time. The body still carries created_at, byte for byte.
 */

export interface TimestampRules {
  /** Records older than this many ms may be deleted (undefined: the topic never deletes by time). */
  retentionMs?: number
  /** The broker refuses timestamps more than this many ms in the past / future. */
  beforeMaxMs?: number
  afterMaxMs?: number
  /** LogAppendTime: the broker replaces the timestamp with its own. */
  logAppendTime: boolean
}

const DAY = 86_400_000
/** Clock skew allowance against the broker's before/after limits. */
const SKEW = 60_000

/** Kafka's defaults, for topics whose configuration bq may not read (assumes deletion after 7 days). */
export const DEFAULT_RULES: TimestampRules = {retentionMs: 7 * DAY, afterMaxMs: 3_600_000, logAppendTime: false}

/** The rules a topic's effective configuration (DescribeConfigs entries) implies. */
export function rulesFromConfig(config: Map<string, string>): TimestampRules {
  const number = (name: string): number | undefined => {
    const value = Number(config.get(name))
    return config.has(name) && Number.isFinite(value) ? value : undefined
  }
  const deletes = (config.get('cleanup.policy') ?? 'delete').split(',').map((p) => p.trim()).includes('delete')
  const retention = number('retention.ms') ?? DEFAULT_RULES.retentionMs
  return {
    retentionMs: deletes && retention !== undefined && retention >= 0 ? retention : undefined,
    beforeMaxMs: number('message.timestamp.before.max.ms') ?? number('message.timestamp.difference.max.ms'),
    afterMaxMs: number('message.timestamp.after.max.ms') ?? number('message.timestamp.difference.max.ms'),
    logAppendTime: config.get('message.timestamp.type') === 'LogAppendTime',
  }
}

/** True when a record stamped `timestamp` is kept long enough and accepted by a topic with these rules. */
export function timestampIsSafe(timestamp: number, now: number, rules: TimestampRules): boolean {
  if (rules.logAppendTime) return true
  if (rules.afterMaxMs !== undefined && timestamp > now + rules.afterMaxMs - SKEW) return false
  if (rules.beforeMaxMs !== undefined && timestamp < now - rules.beforeMaxMs + SKEW) return false
  if (rules.retentionMs !== undefined) {
    const margin = Math.min(rules.retentionMs / 2, DAY)
    if (timestamp < now - rules.retentionMs + margin) return false
  }
  return true
}
