/**
 * First Ctrl-C asks a long operation to stop after its current batch (so nothing is left half
 * done); a second one exits at once (the broker or the staging list still holds every message).
 */
export function stopOnInterrupt(): {requested: () => boolean; dispose: () => void} {
  let requested = false
  const handler = () => {
    if (requested) process.exit(130)
    requested = true
    process.stderr.write('\nstopping after the current batch (Ctrl-C again to exit now)\n')
  }
  process.on('SIGINT', handler)
  return {requested: () => requested, dispose: () => process.off('SIGINT', handler)}
}
