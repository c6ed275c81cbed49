/**
 * URN convention checks (spec-urn.md). The convention is recommended, not enforced by the
 * SDKs, so every finding here is a warning.
 */

export interface UrnIssue {
  code: string
  message: string
}

/**
 * What makes a string a URN at all (RFC 8141, which spec-urn.md builds on): the `urn` scheme, a
 * namespace identifier (2–32 letters, digits, hyphens) and a non-empty name. bq's commands refuse
 * anything else as a message URN; the babel convention below is only warned about.
 */
const URN_SYNTAX = /^urn:[a-z0-9][a-z0-9-]{0,30}[a-z0-9]:\S+$/i

export function isUrn(text: string): boolean {
  return URN_SYNTAX.test(text)
}

const CONVENTION = /^urn:babel:[a-z0-9-]+:[a-z0-9_-]+(\.[a-z0-9_-]+)*$/
/** Event segments that carry an identifier rather than a name: digits, UUIDs, long hex. */
const PAYLOAD_SEGMENT = /^(\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,})$/i

/** URNs repeat across a stream; remember recent verdicts (bounded, so odd inputs cannot grow it). */
const verdicts = new Map<string, UrnIssue[]>()
const MAX_REMEMBERED = 1024

export function checkUrn(urn: string): UrnIssue[] {
  let issues = verdicts.get(urn)
  if (issues === undefined) {
    issues = findUrnIssues(urn)
    if (verdicts.size >= MAX_REMEMBERED) verdicts.clear()
    verdicts.set(urn, issues)
  }
  return issues
}

function findUrnIssues(urn: string): UrnIssue[] {
  const issues: UrnIssue[] = []
  if (/[\\]/.test(urn) || /^[A-Z][A-Za-z0-9]*(\.[A-Z][A-Za-z0-9]*)+$/.test(urn)) {
    issues.push({code: 'urn.class_name', message: `"${urn}" looks like a class name; a URN must never be one (use urn:babel:<context>:<event>)`})
    return issues
  }
  if (/[^\x20-\x7e]/.test(urn)) issues.push({code: 'urn.not_ascii', message: `"${urn}" contains non-ASCII characters; URNs are lowercase ASCII`})
  if (/[A-Z]/.test(urn)) issues.push({code: 'urn.uppercase', message: `"${urn}" contains uppercase letters; URNs are lowercase`})
  if (/\s/.test(urn)) issues.push({code: 'urn.whitespace', message: `"${urn}" contains whitespace`})
  if (!CONVENTION.test(urn) && issues.length === 0) {
    issues.push({code: 'urn.convention', message: `"${urn}" does not follow urn:babel:<context>:<event>`})
  }
  const segments = urn.split(':')
  const lastParts = (segments[segments.length - 1] ?? '').split('.')
  if (segments.length >= 4 && lastParts.some((part) => PAYLOAD_SEGMENT.test(part))) {
    issues.push({code: 'urn.payload', message: `"${urn}" seems to carry an identifier; ids belong in data, not in the URN`})
  }
  return issues
}
