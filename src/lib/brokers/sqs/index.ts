/** Amazon SQS (`sqs://<region>[?endpoint=…]`, @aws-sdk/client-sqs). */
import type {BrokerModule} from '../adapter.js'
import {parseBrokerUrl} from '../shared/parse-url.js'
import {createAdapter} from './adapter.js'

export const broker: BrokerModule = {
  open: async (rawUrl, displayUrl, {timeouts}) => createAdapter(parseBrokerUrl(rawUrl, displayUrl), displayUrl, timeouts),
}

export {createAdapter, SqsAdapter, SQS_CAPABILITIES} from './adapter.js'
export {SqsDrainSession} from './drain.js'
export * from './url.js'
export * from './binding.js'
