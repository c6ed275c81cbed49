/**
 * The Artemis JMS client, for tests that must see a message the way a JMS application does:
 * jms-client/fetch.sh fetches the client jar from Maven Central (once, cached), and
 * jms-client/JmsProbe.java runs as a single-file Java program against it.
 */
import {execFile} from 'node:child_process'
import path from 'node:path'
import {promisify} from 'node:util'

import {repoRoot} from '../../support/conformance.js'

const run = promisify(execFile)
const here = path.join(repoRoot, 'test', 'brokers', 'artemis', 'jms-client')

/** What JmsProbe prints per message. */
export interface JmsSeen {
  jms_type: string | null
  correlation_id: string | null
  text: string | null
}

/** The broker URL as the JMS client takes it: CORE over the same acceptor bq speaks AMQP on. */
export function jmsUrl(artemisUrl: string): string {
  const parsed = new URL(artemisUrl)
  const credentials = new URLSearchParams({user: decodeURIComponent(parsed.username), password: decodeURIComponent(parsed.password)})
  return `tcp://${parsed.hostname}:${parsed.port || '5672'}?${credentials.toString()}`
}

async function clientJar(): Promise<string> {
  const {stdout} = await run(path.join(here, 'fetch.sh'), [], {timeout: 300_000})
  return stdout.trim()
}

/** Consumes (and acknowledges) up to `max` messages of `queue` matching the JMS `selector`. */
export async function jmsConsume(artemisUrl: string, queue: string, selector: string | undefined, max: number, waitMs = 1000): Promise<JmsSeen[]> {
  const jar = await clientJar()
  const {stdout} = await run('java', ['-cp', jar, path.join(here, 'JmsProbe.java'), 'consume', jmsUrl(artemisUrl), queue, selector ?? '-', String(max), String(waitMs)], {timeout: 60_000})
  return stdout.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as JmsSeen)
}
