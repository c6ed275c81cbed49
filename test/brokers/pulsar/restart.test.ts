// @test-uses private-jvm: starts, SIGKILLs and restarts a private JVM broker of its own (never the shared one); one such file at a time
/**
 * Apache Pulsar restarts: a private standalone instance (broker and in-process bookie in one JVM)
 * SIGKILLed mid-redrive and mid-publish, then started again on its ledgers. One instance serves
 * the whole file: a standalone start takes most of a minute here. Acks the killed broker took but
 * had not stored come back as duplicates; with the broker gone, bq cannot check its cursor and
 * counts every ack it sent as a possible duplicate, so the census bound holds as elsewhere.
 */
import {restartSuite} from '../../suites/restart-suite.js'

restartSuite({
  name: 'Pulsar',
  broker: 'pulsar',
  redriveMessages: 2000,
  // Pulsar's admin counts lag the stored messages by thousands under load: with 10,000, a kill at
  // the counted fifth once came after the whole publish had ended (exit 0, nothing to test).
  publishMessages: 20_000,
  idempotentPublish: false,
  // A read waits up to 20 s for messages by design (README, Faults).
  readIdleMs: 20_000,
})
