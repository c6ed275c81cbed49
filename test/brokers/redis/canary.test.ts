/** Canary redrive, loop guard, --only-passing and signals on Redis. */
import {canarySuite} from '../../suites/canary-suite.js'
import {redisUrl} from '../../suites/command-suite.js'
import {requireBroker} from '../../support/brokers.js'

canarySuite({name: 'redis', url: () => redisUrl, available: (t) => requireBroker(t, 'Redis', new URL(redisUrl).hostname, Number(new URL(redisUrl).port || 6379))})
