import {ExitCode, exitNow} from '../errors.js'

/**
 * First Ctrl-C asks a long operation to stop after its current batch (so nothing is left half
 * done; the run then ends with InterruptedError, exit 130); a second one exits at once, also with
 * 130 (the broker or the staging list still holds every message).
 */
export function stopOnInterrupt(): {requested: () => boolean; dispose: () => void} {
  let requested = false
  const handler = () => {
    if (requested) exitNow(ExitCode.interrupted)
    requested = true
    process.stderr.write('\nstopping after the current batch (Ctrl-C again to exit now)\n')
  }
  process.on('SIGINT', handler)
  return {requested: () => requested, dispose: () => process.off('SIGINT', handler)}
}
