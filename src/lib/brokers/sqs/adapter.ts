/**
 * Amazon SQS adapter (@aws-sdk/client-sqs): `sqs://<region>[?endpoint=…][&account=…][&group=…]
 * [&visibility=…][&profile=…]` (url.ts). Works with any SQS-compatible endpoint (ElasticMQ).
 *
 * The body is the envelope text (SQS carries text: bodies must be UTF-8); the envelope fields
 * ride MessageAttributes (binding.ts). SQS has no non-destructive read: a look is a receive,
 * which raises ApproximateReceiveCount and can trigger a queue's redrive policy, hence
 * `receiveSideEffects` (commands read only with --receive). Standard queues keep no order.
 */
import {type SQSClient} from '@aws-sdk/client-sqs'

import {BqError, QueueNotFoundError, UsageError} from '../../errors.js'
import type {BrokerAdapter, BrokerMessage, BrowseOptions, Capabilities, DeliveryCost, DrainOptions, DrainSession, InflightOptions, InflightReport, ListedQueue, OutgoingMessage, PublishReceipt} from '../adapter.js'
import {AdapterBase} from '../shared/adapter-base.js'
import {sqsBinding} from './binding.js'
import {createSqsClient, isQueueMissing, RECEIVE_WAIT_MS, sqsError, SqsQueues} from './client.js'
import {SqsDrainSession} from './drain.js'
import {INFLIGHT_ATTRIBUTES, sqsInflight} from './inflight.js'
import {compareSent} from './message.js'
import {checkOutgoing, prepareEntries, sendEntries} from './publish.js'
import {checkSqsQueueName, isFifoQueue, parseSqsUrl, type SqsTarget} from './url.js'
import {checkBrowse} from '../shared/check-arguments.js'
import type {Timeouts} from '../shared/timeouts.js'

export const SQS_CAPABILITIES: Capabilities = {
  // Queues (topics, entities) exist apart from their messages: reading a missing one is an error.
  queuesExist: true,
  // Every read is a receive: it raises ApproximateReceiveCount (and can push a message into a native DLQ).
  truePeek: false,
  receiveSideEffects: true,
  // Message attributes carry the projection and `bq-replay-bypass`.
  headers: true,
  // DelaySeconds, up to 900 s, per message on standard queues.
  delay: true,
  // Redrive policies (maxReceiveCount → a dead-letter queue); DeadLetterQueueSourceArn is decoded on read.
  nativeDlq: true,
  // A send and a delete are two calls; SQS has no transaction spanning them.
  atomicMove: false,
  // Standard queues deliver in no guaranteed order, and a returned message has no place to go back to.
  ordered: false,
  // A drain takes at most the ApproximateNumberOfMessages seen at its start: a count, so a message
  // sent during the run may be taken in place of an older one.
  drainBoundedAtStart: false,
  // Received messages reappear when their visibility timeout ends.
  afterCrash: 'timeout-returns',
}

/** The queue name a RedrivePolicy sends dead letters to (the last part of its ARN), if any. */
function redriveTarget(policy: string | undefined): string | undefined {
  if (policy === undefined || policy.trim() === '') return undefined
  try {
    const arn = (JSON.parse(policy) as {deadLetterTargetArn?: unknown}).deadLetterTargetArn
    return typeof arn === 'string' ? arn.split(':').pop() || undefined : undefined
  } catch {
    return undefined
  }
}

/** Messages asked of a session per next() while browsing. */
const BROWSE_PAGE = 500

/** The registry's entry point for `sqs://`. */
export function createAdapter(url: URL, displayUrl: string, timeouts?: Timeouts): BrokerAdapter {
  const target = {...parseSqsUrl(url, displayUrl), timeouts}
  return new SqsAdapter(createSqsClient(target), target, displayUrl)
}

export class SqsAdapter extends AdapterBase<SqsDrainSession> {
  readonly kind = 'sqs'
  readonly capabilities = SQS_CAPABILITIES
  readonly binding = sqsBinding
  /** A drain's last receive long-polls (1 s) before it calls the queue empty. */
  readonly readWaitMs = 2 * RECEIVE_WAIT_MS
  private readonly queues: SqsQueues

  constructor(
    private readonly client: SQSClient,
    private readonly target: SqsTarget,
    displayUrl: string,
  ) {
    super(displayUrl, {name: 'SQS'})
    this.queues = new SqsQueues(client, target, displayUrl)
  }

  async publish(queue: string, messages: OutgoingMessage[]): Promise<PublishReceipt | void> {
    this.check(queue, `publish to ${queue}`)
    // Everything refusable is refused before the first send, so a refusal publishes nothing.
    const bodies = checkOutgoing(queue, isFifoQueue(queue), messages)
    if (messages.length === 0) return
    const accepted = new Set<number>()
    const receipt: PublishReceipt = {possiblyTwice: 0}
    for (let attempt = 1; ; attempt++) {
      const url = await this.queues.ensure(queue)
      const facts = await this.queues.factsOf(queue, url)
      const entries = prepareEntries(queue, facts, this.target.group, messages, bodies)
      try {
        await sendEntries({client: this.client, queue, url, fifo: facts.fifo, wrap: (what, error) => sqsError(what, error, this.displayUrl)}, entries, accepted, receipt)
        return receipt
      } catch (error) {
        // The queue was deleted since its URL was looked up: create it again, once, and send the rest.
        const cause = error instanceof BqError ? error.cause : error
        if (attempt === 1 && isQueueMissing(cause)) {
          this.queues.forget(queue)
          continue
        }
        if (error instanceof BqError && accepted.size > 0) {
          throw new BqError(`${error.message} (${accepted.size} of ${messages.length} were accepted)`, {code: error.code, exitCode: error.exitCode, cause: error})
        }
        throw error
      }
    }
  }

  /**
   * Receives up to offset+limit messages, keeps them hidden while it reads, then makes them all
   * visible again. Each one's ApproximateReceiveCount rises by one. SQS returns at most 10 per
   * receive and, on standard queues, in no guaranteed order (and not every message on each pass):
   * what one browse got is sorted by send time, which is as close to queue order as SQS allows.
   * On a FIFO queue at most the first 10 messages of each message group can be seen at once.
   */
  async browse(queue: string, options: BrowseOptions): Promise<BrokerMessage[]> {
    this.check(queue, `browse ${queue}`)
    const {limit, offset} = checkBrowse(options)
    if (limit === 0) return []
    const url = await this.existing(queue)
    const session = this.session(queue, url, offset + limit)
    const found: BrokerMessage[] = []
    try {
      for (;;) {
        const page = await session.next(BROWSE_PAGE)
        if (page.length === 0) break
        for (const message of page) {
          const {handle: _handle, ...shown} = message
          found.push(shown)
        }
      }
    } finally {
      await session.close()
    }
    return found.sort(compareSent).slice(offset, offset + limit)
  }

  /**
   * ListQueues, page by page; then each queue's RedrivePolicy names its dead-letter queue, which
   * marks that one as a native DLQ (read a few queues at a time, not one by one).
   */
  async listQueues(): Promise<ListedQueue[]> {
    this.ensureOpen('list the queues')
    const urls = await this.queues.list()
    const names = new Map(urls.map((url) => [url, decodeURIComponent(url.split('/').pop() ?? url)]))
    const sources = new Map<string, string[]>()
    const queue = [...urls]
    const worker = async (): Promise<void> => {
      for (let url = queue.shift(); url !== undefined; url = queue.shift()) {
        const name = names.get(url) ?? url
        let policy: string | undefined
        try {
          policy = (await this.queues.attributes(name, url, ['RedrivePolicy'])).RedrivePolicy
        } catch (error) {
          // Deleted since it was listed: it is no one's source any more.
          if (error instanceof QueueNotFoundError || isQueueMissing((error as BqError).cause)) continue
          throw error
        }
        const target = redriveTarget(policy)
        if (target !== undefined) sources.set(target, [...(sources.get(target) ?? []), name])
      }
    }
    await Promise.all(Array.from({length: Math.min(8, urls.length)}, worker))
    return [...names.values()].sort().map((name) => {
      const from = sources.get(name)
      return from === undefined ? {queue: name} : {queue: name, nativeDeadLetterFor: from.sort()}
    })
  }

  /** ApproximateNumberOfMessages: SQS's own estimate of the visible messages (eventually consistent on AWS). */
  async count(queue: string): Promise<number> {
    this.check(queue, `count ${queue}`)
    const url = await this.existing(queue)
    const attributes = await this.queues.attributes(queue, url, ['ApproximateNumberOfMessages'])
    const count = Number(attributes.ApproximateNumberOfMessages ?? 0)
    return Number.isSafeInteger(count) && count >= 0 ? count : 0
  }

  /** Received-but-not-deleted and delayed counts, with the queue's visibility timeout (inflight.ts). Receives nothing. */
  async inflight(queue: string, _options: InflightOptions): Promise<InflightReport> {
    this.check(queue, `read what is in flight on ${queue}`)
    const url = await this.existing(queue)
    return sqsInflight(await this.queues.attributes(queue, url, [...INFLIGHT_ATTRIBUTES]))
  }

  async drain(queue: string, options: DrainOptions = {}): Promise<DrainSession> {
    this.check(queue, `drain ${queue}`)
    const max = options.max ?? 0
    if (!Number.isSafeInteger(max) || max < 0) throw new UsageError(`drain max must be a non-negative integer, got ${max}`)
    const url = await this.existing(queue)
    // Bounded by the count at start: messages that arrive during the run wait for the next one.
    let limit = await this.count(queue)
    if (max > 0) limit = Math.min(limit, max)
    return this.session(queue, url, limit)
  }

  /**
   * Every receive raises a message's ApproximateReceiveCount, and a visibility change does not
   * undo it: a dry run receives every message, and a redrive receives what it leaves behind. SQS
   * acts on the count only where the queue itself has a RedrivePolicy: a receive that finds a
   * message past its maxReceiveCount moves it to the policy's dead-letter queue instead. So a DLQ
   * with a RedrivePolicy of its own counts deliveries; one without (the usual case) does not.
   */
  async readsCostDeliveries(queue: string): Promise<DeliveryCost | undefined> {
    this.check(queue, `inspect ${queue}`)
    const url = await this.existing(queue)
    const policy = (await this.queues.attributes(queue, url, ['RedrivePolicy'])).RedrivePolicy
    if (policy === undefined || policy.trim() === '') return undefined
    let limit: number | undefined
    let next: string | undefined
    try {
      const parsed = JSON.parse(policy) as {maxReceiveCount?: unknown; deadLetterTargetArn?: unknown}
      const max = Number(parsed.maxReceiveCount)
      if (Number.isSafeInteger(max) && max > 0) limit = max
      if (typeof parsed.deadLetterTargetArn === 'string') next = parsed.deadLetterTargetArn.split(':').pop() || undefined
    } catch {
      // A policy bq cannot read is still a policy: the cost stands, without its numbers.
    }
    return {
      queue: `SQS queue "${queue}" (it has a RedrivePolicy)`,
      cost: `raises its ApproximateReceiveCount by one; past maxReceiveCount SQS moves the message to ${next === undefined ? "the policy's dead-letter queue" : `queue "${next}"`}`,
      limit,
      alternative: 'to triage it without that cost, remove the RedrivePolicy from the queue for the time being',
    }
  }

  /** The URL of a queue that exists; a QueueNotFoundError (exit 1) when it does not: an SQS queue exists apart from its messages. */
  private async existing(queue: string): Promise<string> {
    const url = await this.queues.find(queue)
    if (url === undefined) throw new QueueNotFoundError(`queue "${queue}" does not exist on ${this.displayUrl}`)
    return url
  }

  // recover() is the base's: SQS returns the messages of a crashed run by itself when their visibility timeout ends.

  protected async release(): Promise<void> {
    this.client.destroy()
  }

  private session(queue: string, url: string | undefined, limit: number): SqsDrainSession {
    return this.track(
      (untrack) =>
        new SqsDrainSession({
          client: this.client,
          queue,
          url,
          limit,
          visibilitySeconds: this.target.visibilitySeconds,
          visibleCount: () => this.count(queue),
          wrap: (what, error) => sqsError(what, error, this.displayUrl),
          onClose: untrack,
        }),
    )
  }

  /** SQS's own queue-name rule. */
  protected override check(queue: string, what: string): void {
    checkSqsQueueName(queue, this.displayUrl)
    this.ensureOpen(what)
  }
}
