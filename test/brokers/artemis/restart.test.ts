// @test-uses private-jvm: starts, SIGKILLs and restarts a private JVM broker of its own (never the shared one); one such file at a time
/** ActiveMQ Artemis restarts: a private instance SIGKILLed mid-redrive and mid-publish, then started again on its journal. */
import {restartSuite} from '../../suites/restart-suite.js'

restartSuite({
  name: 'Artemis',
  broker: 'artemis',
  redriveMessages: 3000,
  publishMessages: 10_000,
  idempotentPublish: false,
})
