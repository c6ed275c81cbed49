/** Canary redrive on RabbitMQ: a classic DLQ (the watch drains and hands back), and a quorum DLQ (every read costs a delivery). */
import amqp from 'amqplib'

import {canarySuite} from '../../suites/canary-suite.js'
import {amqpUrl, brokerCases} from '../../suites/command-suite.js'

canarySuite({
  name: 'rabbitmq',
  url: () => amqpUrl,
  available: brokerCases.rabbitmq.available,
  tests: ['abort', 'ramp', 'signals'],
  atLeastOnce: true,
  countingDlq: async ({dlq}) => {
    const connection = await amqp.connect(amqpUrl)
    try {
      const channel = await connection.createChannel()
      await channel.assertQueue(dlq, {durable: true, arguments: {'x-queue-type': 'quorum'}})
    } finally {
      await connection.close()
    }
  },
})
