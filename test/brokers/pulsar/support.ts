/**
 * Where the Pulsar tests find the real standalone (BQ_TEST_PULSAR_URL, default the one
 * scripts/services.sh starts) and how they name a topic on its admin and WebSocket APIs.
 */
import type {TestContext} from 'node:test'

import {requireBroker} from '../../support/brokers.js'

export const pulsarUrl = process.env.BQ_TEST_PULSAR_URL ?? 'pulsar://127.0.0.1:6650?admin=http://127.0.0.1:8080'
export const admin = new URL(new URL(pulsarUrl).searchParams.get('admin') ?? 'http://127.0.0.1:8080')
export const wsBase = admin.origin.replace(/^http/, 'ws')
export const available = (t: TestContext) => requireBroker(t, 'Pulsar (admin/WebSocket port)', admin.hostname, Number(admin.port || 8080))
export const topicPath = (queue: string) => `persistent/public/default/${encodeURIComponent(queue)}`
