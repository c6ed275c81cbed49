import {UsageError} from '../errors.js'

const UNIT_MS: Record<string, number> = {ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000}

/**
 * A flag's duration (`90s`, `15m`, `1h`, `2d`, `1h30m`) in milliseconds; anything else is a usage
 * error naming the flag. Strict on purpose: `1` or `1 hour` is refused rather than guessed at.
 */
export function parseDuration(text: string, flag: string): number {
  const trimmed = text.trim()
  const parts = [...trimmed.matchAll(/(\d+)(ms|s|m|h|d|w)/g)]
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== trimmed) {
    throw new UsageError(`${flag} "${text}": expected a duration such as 90s, 15m, 1h, 2d or 1h30m`)
  }
  return parts.reduce((sum, [, amount, unit]) => sum + Number(amount) * UNIT_MS[unit], 0)
}
