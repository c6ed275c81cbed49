/** Raw amqplib helpers shared by the RabbitMQ test files. */
import type {Channel, GetMessage} from 'amqplib'

/** Every message on a queue, head first, removed (basic.get with auto-ack: no return, no count); closes the channel. */
export async function getAllAndClose(channel: Channel, queue: string): Promise<GetMessage[]> {
  const out: GetMessage[] = []
  for (;;) {
    const message = await channel.get(queue, {noAck: true})
    if (message === false) break
    out.push(message)
  }
  await channel.close()
  return out
}
