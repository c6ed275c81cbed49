import type {Message} from 'amqplib'

/** AMQP property names as the spec spells them, shown by peek and, but for cluster_id, written back by a restore. */
export const PROPERTY_NAMES: Array<[keyof Message['properties'], string]> = [
  ['contentType', 'content_type'],
  ['contentEncoding', 'content_encoding'],
  ['deliveryMode', 'delivery_mode'],
  ['priority', 'priority'],
  ['correlationId', 'correlation_id'],
  ['replyTo', 'reply_to'],
  ['expiration', 'expiration'],
  ['messageId', 'message_id'],
  ['timestamp', 'timestamp'],
  ['type', 'type'],
  ['userId', 'user_id'],
  ['appId', 'app_id'],
  ['clusterId', 'cluster_id'],
]
