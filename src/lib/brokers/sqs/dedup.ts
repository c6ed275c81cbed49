/**
 * FIFO deduplication ids, and why a redrive does not use meta.id as it is.
 *
 * The binding sets MessageDeduplicationId = meta.id. SQS accepts a send whose id it saw in the
 * last 5 minutes and reports success, but never delivers it (documented for SendMessage and
 * SendMessageBatch; ElasticMQ 1.6.16 even answers with the first message's MessageId). The
 * answer cannot tell bq that this happened, and a redrive re-sends an existing meta.id by
 * design: a message that failed quickly, or one redriven twice within 5 minutes, would vanish.
 *
 * So a re-publish (redrive, replay: OutgoingMessage.republish) gets `<meta.id>:bq-<nonce>`, the
 * nonce being random per message per publish call and kept across bq's own retries of that call.
 * Within a call SQS still absorbs a retried send; across runs a re-send is a new message, which is
 * the at-least-once the redrive rules allow. `bq publish` mints fresh meta.ids, so it keeps the
 * binding's plain meta.id. Consumers deduplicate on meta.id (bq-message-id), which is unchanged.
 */
import {createHash, randomBytes} from 'node:crypto'

/** SQS's rule: 1–128 characters, alphanumerics and punctuation. */
const VALID = /^[\x21-\x7e]{1,128}$/

/** A fresh nonce for one message of one publish call. */
export function republishNonce(): string {
  return randomBytes(8).toString('hex')
}

/**
 * The deduplication id for a message: meta.id (or, for a body that is not an envelope, a hash of
 * the body), plus the nonce for a re-publish. An id SQS would refuse is replaced by its SHA-256.
 */
export function deduplicationId(metaId: string | undefined, body: Buffer, nonce?: string): string {
  let base = metaId ?? sha256(body)
  if (!VALID.test(base)) base = sha256(Buffer.from(base, 'utf8'))
  if (nonce === undefined) return base
  const suffix = `:bq-${nonce}`
  return base.length + suffix.length <= 128 ? base + suffix : sha256(Buffer.from(base, 'utf8')) + suffix
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}
