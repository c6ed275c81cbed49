// @test-alone: starts, SIGKILLs and restarts a private JVM broker, and bounds how long bq takes to give up
/** ActiveMQ Artemis restarts: a private instance SIGKILLed mid-redrive and mid-publish, then started again on its journal. */
import {restartSuite} from '../../suites/restart-suite.js'

restartSuite({
  name: 'Artemis',
  broker: 'artemis',
  redriveMessages: 3000,
  publishMessages: 10_000,
  idempotentPublish: false,
})
