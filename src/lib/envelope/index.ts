/** The BabelQueue envelope codec: one import for every command. */
export {Envelope, EnvelopeDecodeError, annotate, decode, decodeEnvelope, encode, fieldsOf, notEnvelopeReason, resetForRedrive, resetForRedriveBytes, withNewId} from './envelope.js'
export type {DeadLetterInfo, DeadLetterView, DecodeErrorKind} from './envelope.js'
export {MakeError, compactDataText, make} from './make.js'
export type {MakeOptions} from './make.js'
export {childPath, validateEnvelopeText, validateEnvelopeValue} from './validate.js'
export type {EnvelopeCheck, Problem, Severity} from './validate.js'
export type {EnvelopeFields, NativeFields} from './fields.js'
export {REPLAY_BYPASS_HEADER} from './fields.js'
