// @test-uses redis
/**
 * `dlq ls --format openmetrics` as an exporter: a run that read the broker says `bq_up 1` and when;
 * one that could not (unreachable, refused credentials, a store it cannot open) still writes
 * `bq_up 0`, its exit code and the last success where one is known, and exits with its failure's
 * code: a textfile collector must not keep serving the last good numbers as current.
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {redisUrl} from '../suites/command-suite.js'
import {requireBroker} from '../support/brokers.js'
import {hasStackTrace, runBq} from '../support/cli.js'
import {family, parseOpenMetrics, parsePrometheusText, sampleValue} from '../support/metrics-text.js'

let dir: string
let env: NodeJS.ProcessEnv
before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-exporter-health-'))
  env = {XDG_DATA_HOME: dir, BQ_BROKER: '', BQ_LEDGER: path.join(dir, 'ledger.db')}
})
after(() => rmSync(dir, {recursive: true, force: true}))

const redisAvailable = (t: TestContext) => requireBroker(t, 'Redis', new URL(redisUrl).hostname, Number(new URL(redisUrl).port || 6379))

describe('dlq ls --format openmetrics reports its own health', () => {
  test('the embedded store: up with a success time; then, the store broken, bq_up 0 with that time and the exit code', async () => {
    const url = `sqlite://${path.join(dir, 'store.db')}`
    assert.equal((await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', 'orders.dlq', '-b', url], {env})).code, 0)
    const before = Math.floor(Date.now() / 1000)
    const ok = await runBq(['dlq', 'ls', '--format', 'openmetrics', '-b', url], {env})
    assert.equal(ok.code, 0, ok.stderr)
    const labels = {broker: 'sqlite', broker_url: url}
    const up = parseOpenMetrics(ok.stdout).families
    assert.equal(sampleValue(family(up, 'bq_up'), labels), 1)
    const success = sampleValue(family(up, 'bq_last_success_timestamp_seconds'), labels) ?? 0
    assert.ok(success >= before && success <= Date.now() / 1000 + 1, String(success))

    writeFileSync(path.join(dir, 'store.db'), 'not a database\n')
    const down = await runBq(['dlq', 'ls', '--format', 'openmetrics', '-b', url], {env})
    assert.notEqual(down.code, 0)
    assert.ok(!hasStackTrace(down.stderr), down.stderr)
    assert.match(down.stderr, /^Error: /m)
    const families = parseOpenMetrics(down.stdout).families
    assert.equal(sampleValue(family(families, 'bq_up'), labels), 0)
    assert.equal(sampleValue(family(families, 'bq_last_exit_code'), labels), down.code)
    assert.equal(sampleValue(family(families, 'bq_last_success_timestamp_seconds'), labels), success)
    assert.ok(!families.some((f) => f.name === 'bq_dlq_messages'), 'no DLQ figures it could not read')
  })

  test('Redis unreachable: exit 4 and bq_up 0 (Prometheus text too)', async () => {
    const url = 'redis://127.0.0.1:1'
    const down = await runBq(['dlq', 'ls', '--format', 'prometheus', '-b', url], {env})
    assert.equal(down.code, 4, down.stderr)
    const families = parsePrometheusText(down.stdout)
    assert.equal(sampleValue(family(families, 'bq_up'), {broker: 'redis', broker_url: url}), 0)
    assert.equal(sampleValue(family(families, 'bq_last_exit_code'), {broker: 'redis', broker_url: url}), 4)
  })

  test('Redis refusing the credentials: exit 6 and bq_up 0, the password never in a label', async (t) => {
    if (!(await redisAvailable(t))) return
    const host = new URL(redisUrl).host
    const down = await runBq(['dlq', 'ls', '--format', 'openmetrics', '-b', `redis://nobody:s3cret-pw@${host}`], {env})
    assert.equal(down.code, 6, down.stderr)
    assert.doesNotMatch(down.stdout, /s3cret-pw/)
    const families = parseOpenMetrics(down.stdout).families
    assert.equal(sampleValue(family(families, 'bq_up'), {broker: 'redis', broker_url: `redis://nobody:***@${host}`}), 0)
  })

  test('Redis up: bq_up 1 beside the figures', async (t) => {
    if (!(await redisAvailable(t))) return
    const ok = await runBq(['dlq', 'ls', '--format', 'openmetrics', '--match', 'bqtest-none-*', '-b', redisUrl], {env})
    assert.equal(ok.code, 0, ok.stderr)
    const families = parseOpenMetrics(ok.stdout).families
    assert.equal(family(families, 'bq_up').metrics.map((m) => Number(m.value)).join(), '1')
  })
})
