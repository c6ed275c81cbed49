/**
 * The Redis binding's side of the SDK frame (src/lib/envelope/frame.ts): how a stored list
 * element becomes a BrokerMessage, and how an OutgoingMessage becomes the element to store.
 * Bare envelopes pass through byte for byte both ways.
 */
import {REPLAY_BYPASS_HEADER} from '../../envelope/fields.js'
import {readFrame, writeFrame} from '../../envelope/frame.js'
import type {BrokerMessage, OutgoingMessage} from '../adapter.js'
import {outgoingAppHeaders, pickAppHeaders} from '../shared/app-headers.js'
import {BYPASS_MARKER_VALUE, isBypassMarker} from '../shared/native-values.js'

/**
 * A stored element as a message: a frame is unwrapped (`body` = the envelope inside, `headers` =
 * the frame's, `stored` = the element); a bare one is its own body. A broken frame stays whole
 * as the body, so the envelope decoder's frame check reports it as poison with its reason.
 */
export function messageOf(stored: Buffer, position: string): BrokerMessage {
  const frame = readFrame(stored)
  if (frame.kind !== 'frame') return {body: stored, headers: {}, native: {}, position}
  // bq's own names (the marker among them) never travel as app headers, as on every binding.
  const appHeaders = pickAppHeaders(frame.headers)
  return {body: frame.body, headers: frame.headers, native: isBypassMarker(frame.headers[REPLAY_BYPASS_HEADER]) ? {replayBypass: true} : {}, position, appHeaders, stored}
}

/** The element to store: a frame when the message carries headers or the replay marker, else its exact body. */
export function storedOf(message: OutgoingMessage): Buffer {
  // The marker follows `bypass` alone, never a copied header; bq's own names are not copied either.
  // No run id: a Redis element is exactly what the SDKs write (their redrive-with-bypass frame,
  // byte for byte), and a bare envelope stays bare.
  const headers = outgoingAppHeaders({...message, runId: undefined})
  if (message.bypass) headers[REPLAY_BYPASS_HEADER] = BYPASS_MARKER_VALUE
  return Object.keys(headers).length === 0 ? message.body : writeFrame(message.body, headers)
}
