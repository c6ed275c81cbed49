/**
 * Local `$ref`s of a schema (`#/definitions/address`, `#/$defs/…`, any JSON pointer into the same
 * document): resolving one, and finding the ones that cannot be followed. bq resolves local
 * references only; a `$ref` to another file or a URL is reported, never fetched.
 */

type Schema = Record<string, unknown>

export const isSchemaObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value)

/** A JSON pointer's segments (`#/definitions/a~1b` → ['definitions', 'a/b']); undefined when not local. */
export function pointerSegments(ref: string): string[] | undefined {
  if (ref === '#') return []
  if (!ref.startsWith('#/')) return undefined
  const body = ref.slice(2)
  // Nothing to decode or unescape (most pointers): the segments as they are.
  if (!body.includes('%') && !body.includes('~')) return body.split('/')
  return body.split('/').map((raw) => safeDecode(raw).replace(/~1/g, '/').replace(/~0/g, '~'))
}

/** A plain-name fragment (`#address`): draft-07 names a subschema by giving it `"$id": "#address"`. */
const isPlainName = (ref: string): boolean => /^#[A-Za-z][\w.:-]*$/.test(ref)

/** The node a local reference points at; undefined when it is not local or points at nothing. */
export function resolveRef(root: unknown, ref: string): unknown {
  if (isPlainName(ref)) return namedSchema(root, ref)
  const segments = pointerSegments(ref)
  if (segments === undefined) return undefined
  let node: unknown = root
  for (const key of segments) {
    if (Array.isArray(node) && /^\d+$/.test(key)) node = node[Number(key)]
    else node = isSchemaObject(node) ? node[key] : undefined
  }
  return node
}

/** The subschema whose `$id` is the fragment (or ends with it, after the document's own base). */
function namedSchema(root: unknown, fragment: string): unknown {
  let found: unknown
  walk(root, [], (node) => {
    const id = node.$id
    if (found === undefined && typeof id === 'string' && (id === fragment || (id.endsWith(fragment) && !id.slice(0, -fragment.length).includes('#')))) found = node
  })
  return found
}

/** The JSON pointer (`/properties/a~1b`) of a path of keys. */
export function toPointer(segments: Array<string | number>): string {
  return segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('')
}

export interface RefProblem {
  /** The JSON pointer of the `$ref` keyword. */
  pointer: string
  ref: string
  kind: 'not-local' | 'unresolved' | 'cycle'
  message: string
}

/**
 * Every `$ref` that cannot be followed: not local, pointing at nothing, or part of a cycle of
 * references that never reaches a schema (`a` → `b` → `a`), which no validator can evaluate.
 * A recursive schema (a tree whose `children` items refer back to it) is not such a cycle.
 */
export function refProblems(root: unknown): RefProblem[] {
  const problems: RefProblem[] = []
  walk(root, [], (node, path) => {
    const ref = node.$ref
    if (typeof ref !== 'string') return
    const pointer = toPointer([...path, '$ref'])
    if (pointerSegments(ref) === undefined && !isPlainName(ref)) {
      problems.push({pointer, ref, kind: 'not-local', message: `$ref ${ref} is not a local reference (bq resolves #/… pointers and #name fragments only)`})
    } else if (resolveRef(root, ref) === undefined) {
      problems.push({pointer, ref, kind: 'unresolved', message: `$ref ${ref} points at nothing`})
    } else if (refCycle(root, node) !== undefined) {
      problems.push({pointer, ref, kind: 'cycle', message: `$ref ${ref} is a reference cycle (${refCycle(root, node)!.join(' → ')})`})
    }
  })
  return problems
}

/**
 * The chain of references when following `$ref`s (and `allOf` branches, which apply at the same
 * place) from `start` comes back to a schema already on the chain; undefined when it does not.
 */
export function refCycle(root: unknown, start: Schema): string[] | undefined {
  const onChain = new Set<unknown>()
  const chain: string[] = []
  const visit = (node: unknown): string[] | undefined => {
    if (!isSchemaObject(node)) return undefined
    if (onChain.has(node)) return [...chain]
    onChain.add(node)
    try {
      if (typeof node.$ref === 'string') {
        chain.push(node.$ref)
        const found = visit(resolveRef(root, node.$ref))
        chain.pop()
        if (found) return found
      }
      if (Array.isArray(node.allOf)) for (const branch of node.allOf) {
        const found = visit(branch)
        if (found) return found
      }
      return undefined
    } finally {
      onChain.delete(node)
    }
  }
  return visit(start)
}

/**
 * Calls `visit` on every object of a schema document (arrays walked too), depth first. `path` is
 * one array pushed and popped as the walk goes (a walk of a large registry made one per node):
 * it is valid during the call only; a visitor that keeps it keeps a copy.
 */
export function walk(node: unknown, path: Array<string | number>, visit: (node: Schema, path: Array<string | number>) => void): void {
  const at = [...path]
  const step = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        at.push(i)
        step(value[i])
        at.pop()
      }
      return
    }
    if (!isSchemaObject(value)) return
    visit(value, at)
    // for…in: a parsed schema's own keys (JSON has no inherited ones), without an array per node.
    for (const key in value) {
      // enum, const, examples and default hold data, not schemas: a "$ref" key in them is a value.
      if (key === 'enum' || key === 'const' || key === 'examples' || key === 'default') continue
      const child = value[key]
      if (typeof child === 'object' && child !== null) {
        at.push(key)
        step(child)
        at.pop()
      }
    }
  }
  step(node)
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}
