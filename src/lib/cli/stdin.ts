/** Reads all of stdin, as bytes, when it is a pipe or file; undefined on a terminal (nothing to read). */
export async function readStdinIfPiped(): Promise<Buffer | undefined> {
  if (process.stdin.isTTY) return undefined
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}
