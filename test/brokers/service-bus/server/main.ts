/**
 * Runs the Service Bus test server on its own: `node --import tsx test/brokers/service-bus/server/main.ts [port]`.
 * Prints the connection string on the first line of stdout and serves until killed.
 */
import {startServiceBusTestServer} from './server.js'

const port = Number(process.argv[2] ?? 0)
const server = await startServiceBusTestServer({port, lockDurationMs: Number(process.env.BQ_SB_LOCK_MS ?? 60_000)})
process.stdout.write(`${server.connectionString}\n`)
const stop = () => void server.close().then(() => process.exit(0))
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
