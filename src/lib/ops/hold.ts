/**
 * The rules that hold selected messages back on the DLQ on purpose (RedriveRequest.hold): the
 * loop guard (--max-redrives), the schema gate (--registry --only-passing) and a canary's own
 * returned messages. Each is a function of the message view; they combine, first to hold wins.
 */
import type {RedriveHistory} from '../ledger/redrive-history.js'
import type {SchemaRegistry} from '../schema/registry.js'
import type {MessageView} from './message-view.js'
import type {HoldRule} from './redrive-types.js'

/** Holds messages redriven `max` or more times before; counts those redriven before either way. */
export class LoopGuard {
  /** Selected messages that had been redriven before, by how often. */
  readonly before: Record<string, number> = {}
  /** Counted once each, though a canary's stages may see a message more than once. */
  private readonly counted = new Set<string>()

  constructor(private readonly history: RedriveHistory, private readonly max: number | undefined) {}

  readonly rule: HoldRule = (view) => {
    const times = this.history.times(view.id)
    if (times === 0) return undefined
    if (this.max !== undefined && times >= this.max) return {outcome: 'looping', error: `redriven ${times} time(s) before (--max-redrives ${this.max})`}
    if (view.id === undefined || this.counted.has(view.id)) return undefined
    this.counted.add(view.id)
    this.before[times] = (this.before[times] ?? 0) + 1
    return undefined
  }

  /** Selected messages the run went on to move although they had been redriven before. */
  get redrivenBefore(): number {
    return this.counted.size
  }
}

/** The first failing rule of a message's data against its URN's schema, or undefined when it passes. */
export function schemaFailure(registry: SchemaRegistry, view: MessageView): string | undefined {
  if (view.envelope === undefined || view.urn === undefined) return 'not an envelope'
  const problems = registry.check(view.urn, view.envelope.value('data'))
  if (problems === undefined) return `no schema is registered for ${view.urn}`
  const first = problems.find((problem) => problem.severity === 'error')
  return first === undefined ? undefined : `${first.path}: ${first.message}`
}

/** --only-passing: holds messages whose data fails (or has no) schema as still_invalid. */
export function onlyPassing(registry: SchemaRegistry): HoldRule {
  return (view) => {
    const failure = schemaFailure(registry, view)
    return failure === undefined ? undefined : {outcome: 'still_invalid', error: failure}
  }
}

/** The rules in order; the first that holds a message decides its outcome. Undefined when there are none. */
export function holdAll(rules: Array<HoldRule | undefined>): HoldRule | undefined {
  const present = rules.filter((rule): rule is HoldRule => rule !== undefined)
  if (present.length === 0) return undefined
  return (view) => {
    for (const rule of present) {
      const held = rule(view)
      if (held !== undefined) return held
    }
    return undefined
  }
}
