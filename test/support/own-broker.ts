/**
 * A private instance of a Java test broker (Kafka, Artemis, Pulsar) for tests that kill and restart
 * the broker itself: the shared instances on the default ports serve every other test and must
 * never be touched. test/brokers/brokers.sh runs it, with a state directory of its own
 * (BQ_BROKERS_HOME) and free ports of its own (BQ_BROKERS_<NAME>_PORT); its fetched jars are
 * linked from the shared state directory when they are there (no Maven run), else Maven copies
 * them from ~/.m2.
 *
 * `kill()` SIGKILLs the broker's whole process group (brokers.sh starts it in a session of its
 * own), as a crash or an OOM killer would; `restart()` starts it again on the same data.
 */
import {execFile} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync} from 'node:fs'
import {createServer} from 'node:net'
import {homedir, tmpdir} from 'node:os'
import path from 'node:path'

import {repoRoot} from './conformance.js'

export type OwnBrokerName = 'kafka' | 'artemis' | 'pulsar'

const brokersScript = path.join(repoRoot, 'test', 'brokers', 'brokers.sh')
const sharedHome = process.env.BQ_BROKERS_HOME ?? path.join(homedir(), '.cache', 'bq-test-brokers')
/** What brokers.sh fetches per broker and keeps across `clean`: linked, so no Maven run is needed. */
const fetched: Record<OwnBrokerName, string> = {kafka: 'lib', artemis: 'dist', pulsar: 'lib'}
/** Small heaps: this instance runs next to the shared ones on a 2-core machine. */
const heaps: Record<OwnBrokerName, Record<string, string>> = {
  kafka: {BQ_BROKERS_KAFKA_HEAP: '-Xms64m -Xmx256m'},
  artemis: {BQ_BROKERS_ARTEMIS_HEAP_MAX: '256M'},
  pulsar: {BQ_BROKERS_PULSAR_HEAP: '-Xms128m -Xmx384m -XX:MaxDirectMemorySize=192m'},
}

/** Process groups of instances still running, killed if the test process exits without stopping them. */
const running = new Set<number>()
process.on('exit', () => {
  for (const group of running) {
    try {
      process.kill(-group, 'SIGKILL')
    } catch {
      // already gone
    }
  }
})

export class OwnBroker {
  private constructor(
    readonly name: OwnBrokerName,
    private readonly home: string,
    private readonly ports: Record<string, number>,
  ) {}

  /** Starts a fresh instance on free ports and waits until it is healthy. */
  static async start(name: OwnBrokerName): Promise<OwnBroker> {
    const home = mkdtempSync(path.join(tmpdir(), `bq-own-${name}-`))
    const shared = path.join(sharedHome, name, fetched[name])
    if (existsSync(path.join(shared, '.bq-stamp'))) {
      mkdirSync(path.join(home, name), {recursive: true})
      symlinkSync(shared, path.join(home, name, fetched[name]))
    }
    const broker = new OwnBroker(name, home, await portsFor(name))
    try {
      await broker.restart()
    } catch (error) {
      await broker.destroy()
      throw error
    }
    return broker
  }

  /** The URL bq and the tests use for this instance. */
  get url(): string {
    switch (this.name) {
      case 'kafka': return `kafka://127.0.0.1:${this.ports.BQ_BROKERS_KAFKA_PORT}`
      case 'artemis': return `artemis://bq:bq@127.0.0.1:${this.ports.BQ_BROKERS_ARTEMIS_PORT}`
      case 'pulsar': return `pulsar://127.0.0.1:${this.ports.BQ_BROKERS_PULSAR_PORT}?admin=http://127.0.0.1:${this.ports.BQ_BROKERS_PULSAR_WEB_PORT}`
    }
  }

  /** Starts the broker on its data (fresh or left by a kill) and waits until healthy; resolves to the milliseconds it took. */
  async restart(): Promise<number> {
    const started = Date.now()
    await this.script('start')
    const pid = this.pid()
    if (pid === undefined) throw new Error(`${this.name}: brokers.sh start left no process`)
    running.add(pid)
    return Date.now() - started
  }

  /** SIGKILLs the broker's process group and waits (bounded) until the process is gone. */
  async kill(): Promise<void> {
    const pid = this.pid()
    if (pid === undefined) return
    process.kill(-pid, 'SIGKILL')
    running.delete(pid)
    const deadline = Date.now() + 15_000
    while (alive(pid)) {
      if (Date.now() > deadline) throw new Error(`${this.name}: process ${pid} still alive 15 s after SIGKILL`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  /** Kills the instance and deletes its state directory (its data has served its test). */
  async destroy(): Promise<void> {
    await this.kill().catch(() => undefined)
    rmSync(this.home, {recursive: true, force: true})
  }

  /** The broker's PID (also its process group) when it runs, checked to be this instance's, not the shared one. */
  private pid(): number | undefined {
    const file = path.join(this.home, this.name, `${this.name}.pid`)
    if (!existsSync(file)) return undefined
    const pid = Number(readFileSync(file, 'utf8').trim())
    if (!Number.isSafeInteger(pid) || pid <= 0 || !alive(pid)) return undefined
    let cmdline = ''
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    } catch {
      return undefined
    }
    return cmdline.includes(`-Dbq.test.broker=${this.name}`) && cmdline.includes(this.home) ? pid : undefined
  }

  private script(command: string): Promise<void> {
    return new Promise((resolve, reject) => {
      execFile('bash', [brokersScript, command, this.name], {env: {...process.env, BQ_BROKERS_HOME: this.home, BQ_BROKERS_PARALLEL: '0', ...heaps[this.name], ...Object.fromEntries(Object.entries(this.ports).map(([k, v]) => [k, String(v)]))}, timeout: 300_000, maxBuffer: 4 * 1024 * 1024}, (error, stdout, stderr) => {
        if (error) reject(new Error(`brokers.sh ${command} ${this.name} (home ${this.home}) failed: ${stderr || stdout || error.message}`))
        else resolve()
      })
    })
  }
}

/** Alive and not a zombie waiting for its parent. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return !/^\d+ \(.*\) Z /.test(stat)
  } catch {
    return false
  }
}

/** Free loopback ports for the instance's listeners, in brokers.sh's variables. */
async function portsFor(name: OwnBrokerName): Promise<Record<string, number>> {
  const names: Record<OwnBrokerName, string[]> = {
    kafka: ['BQ_BROKERS_KAFKA_PORT', 'BQ_BROKERS_KAFKA_CONTROLLER_PORT', 'BQ_BROKERS_KAFKA_FAULT_PORT', 'BQ_BROKERS_KAFKA_FAULT_PROXY_PORT'],
    artemis: ['BQ_BROKERS_ARTEMIS_PORT'],
    pulsar: ['BQ_BROKERS_PULSAR_PORT', 'BQ_BROKERS_PULSAR_WEB_PORT'],
  }
  // Held open together so no two are the same; closed before the broker binds them.
  const servers = await Promise.all(names[name].map(() => new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve(server))
  })))
  const ports = Object.fromEntries(names[name].map((variable, i) => [variable, (servers[i].address() as {port: number}).port]))
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
  return ports
}
