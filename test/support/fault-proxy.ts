/**
 * A TCP proxy between bq and a test broker that can misbehave on command: cut every connection
 * (a blip), stop forwarding while keeping sockets open (an outage that looks like a hung broker,
 * not a refused port), slow every chunk down, or refuse new connections. The fault tests point
 * bq at `proxy.port` and seed and count through the broker's own port.
 */
import {createServer, connect} from 'node:net'
import type {Server, Socket} from 'node:net'

interface Pair {
  client: Socket
  upstream: Socket
}

export class FaultProxy {
  private readonly pairs = new Set<Pair>()
  private blackholed = false
  private delayMs = 0
  private refusing = false

  private constructor(
    private readonly server: Server,
    readonly port: number,
    readonly targetHost: string,
    readonly targetPort: number,
  ) {}

  /**
   * Listens on a loopback port (ephemeral unless `listenPort` is given: a broker that advertises
   * the proxy's address, like the test Kafka's FAULT listener, needs a known one) and forwards to
   * host:port.
   */
  static async start(targetHost: string, targetPort: number, listenPort = 0): Promise<FaultProxy> {
    const pending: Socket[] = []
    const server = createServer((client) => pending.push(client))
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(listenPort, '127.0.0.1', () => resolve())
    })
    const proxy = new FaultProxy(server, (server.address() as {port: number}).port, targetHost, targetPort)
    server.removeAllListeners('connection')
    server.on('connection', (client) => proxy.accept(client))
    for (const client of pending) proxy.accept(client)
    return proxy
  }

  /** How many client connections are open now. */
  get connections(): number {
    return this.pairs.size
  }

  /** Cuts every open connection, both sides (the broker is still there: a blip). */
  reset(): void {
    for (const pair of this.pairs) {
      pair.client.destroy()
      pair.upstream.destroy()
    }
    this.pairs.clear()
  }

  /** On: nothing is forwarded either way; connections stay open, new ones are accepted and hang. */
  blackhole(on: boolean): void {
    this.blackholed = on
    for (const pair of this.pairs) {
      // Paused sockets stop reading, so nothing queues up in this process while the hole is open.
      if (on) {
        pair.client.pause()
        pair.upstream.pause()
      } else {
        pair.client.resume()
        pair.upstream.resume()
      }
    }
  }

  /** Delays every chunk by `ms` in each direction (0: none). */
  delay(ms: number): void {
    this.delayMs = ms
  }

  /** On: new connections are closed at once (a port where nothing answers); open ones are kept. */
  refuse(on: boolean): void {
    this.refusing = on
  }

  async close(): Promise<void> {
    this.reset()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private accept(client: Socket): void {
    if (this.refusing) {
      client.destroy()
      return
    }
    const upstream = connect({host: this.targetHost, port: this.targetPort})
    const pair = {client, upstream}
    this.pairs.add(pair)
    const drop = () => {
      this.pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    client.on('error', drop)
    upstream.on('error', drop)
    // A side that closes cleanly closes the other once what it sent before has gone through:
    // with a delay set, the last frames (an AMQP close, say) are still held when its FIN comes.
    const toUpstream = this.pipe(client, upstream)
    const toClient = this.pipe(upstream, client)
    client.on('close', () => void toUpstream().then(drop))
    upstream.on('close', () => void toClient().then(drop))
    if (this.blackholed) {
      client.pause()
      upstream.pause()
    }
  }

  /**
   * Forwards chunks from one side to the other in order, each held for the delay set when it
   * came, and the end of the stream after them. Returns what resolves once everything received
   * so far is forwarded.
   */
  private pipe(from: Socket, to: Socket): () => Promise<void> {
    // A chain keeps order when the delay changes between chunks.
    let chain = Promise.resolve()
    from.on('data', (chunk: Buffer) => {
      // Latency, not a throughput cap: each chunk is due `delay` after it arrived.
      const due = Date.now() + this.delayMs
      chain = chain.then(async () => {
        const wait = due - Date.now()
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
        // A chunk read just before the hole opened is held, not forwarded.
        while (this.blackholed && !to.destroyed) await new Promise((resolve) => setTimeout(resolve, 50))
        if (!to.destroyed) to.write(chunk)
      })
    })
    from.on('end', () => {
      chain = chain.then(() => {
        if (!to.destroyed) to.end()
      })
    })
    return () => chain
  }
}
