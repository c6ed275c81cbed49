/** ActiveMQ Artemis restarts: a private instance SIGKILLed mid-redrive and mid-publish, then started again on its journal. */
import {restartSuite} from '../../suites/restart-suite.js'

restartSuite({
  name: 'Artemis',
  broker: 'artemis',
  redriveMessages: 3000,
  publishMessages: 10_000,
  idempotentPublish: false,
})
