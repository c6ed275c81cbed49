/** The dead-letter queue of a queue: `<queue>.dlq` (spec-dead-letter-and-tracing.md), unless --dlq names one. */
export function dlqName(queue: string, explicit?: string): string {
  if (explicit !== undefined && explicit !== '') return explicit
  return queue.endsWith('.dlq') ? queue : `${queue}.dlq`
}
