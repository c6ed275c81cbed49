/**
 * `bq inflight ls` on Kafka: the lag of every consumer group that has committed offsets on the
 * topic, per partition: the partition's end (its last stable offset, what a read-committed
 * consumer can reach) minus the group's committed offset, as kafka-consumer-groups.sh shows it.
 *
 * Kafka keeps no per-message in-flight state: a consumer fetches by offset and commits how far it
 * got, so "taken and not finished" is only visible as records past the committed offset. A
 * partition the group never committed on has no lag to show and is left out.
 *
 * bq's own groups: `bq-redrive.<topic>` is listed (it is a reader: its lag is what a redrive
 * would still read, counting the finished runs its metadata skips, which `bq count` leaves out).
 * `bq-redrive-lock.<topic>` is not: it holds the redrive lease as metadata on partition 0 and
 * reads nothing, so its "lag" would be every record of that partition.
 */
import type {InflightGauge, InflightReport} from '../adapter.js'
import {leaseGroup} from './lease.js'
import type {KafkaClient, PartitionLayout, Watermarks} from './client/index.js'

export const KAFKA_COUNTS_ONLY =
  'Kafka keeps no per-message in-flight state: a consumer group only commits how far it read, so what it has taken and not finished shows as lag (records past its committed offset), not as messages'
export const KAFKA_RETURNS_ITSELF =
  "Kafka returns nothing itself because nothing was removed: after a rebalance or a restart the group reads again from its last committed offset, so records it took and did not commit are read again"

const LAG_HELP = 'records past the group\'s committed offset, up to the end of the partition'
const REDRIVE_LAG_HELP = 'bq redrive\'s own progress: records past its committed offset (bq count leaves out those its finished runs skipped)'

/** The lag gauges of a topic that exists (`layout`, `marks` read by the caller). */
export async function kafkaInflight(client: KafkaClient, topic: string, layout: PartitionLayout[], marks: Map<number, Watermarks>, redriveGroup: string): Promise<InflightReport> {
  const partitions = layout.map((entry) => entry.partition)
  const gauges: InflightGauge[] = []
  for (const group of await client.groupIds()) {
    if (group === leaseGroup(topic)) continue
    const offsets = await client.groupOffsets(group, topic, partitions)
    for (const partition of partitions) {
      const committed = offsets.get(partition)?.offset
      if (committed === undefined) continue
      const end = marks.get(partition)?.high ?? 0
      // A commit past the end belongs to an earlier topic of the same name (deleted and re-created).
      const lag = Math.max(0, end - committed)
      gauges.push({name: 'lag', value: lag, labels: {group, partition: String(partition)}, help: group === redriveGroup ? REDRIVE_LAG_HELP : LAG_HELP})
    }
  }
  return {gauges, countsOnly: KAFKA_COUNTS_ONLY, returnsItself: KAFKA_RETURNS_ITSELF}
}
