/** Reads all of stdin when it is a pipe or file; undefined on a terminal (nothing to read). */
export async function readStdinIfPiped(): Promise<string | undefined> {
  if (process.stdin.isTTY) return undefined
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
