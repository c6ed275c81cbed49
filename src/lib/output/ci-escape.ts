/** Escaping for the CI report formats (GitHub workflow commands, JUnit XML), shared by every reporter. */

/** The message part of a GitHub workflow command (`::error …::message`). */
export const escapeData = (s: string): string => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')

/** A property of a GitHub workflow command (`file=…,line=…`). */
export const escapeProperty = (s: string): string => escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C')

/** Escapes text for XML, dropping characters XML 1.0 cannot carry at all. */
export function xml(text: string): string {
  return text
    // eslint-disable-next-line no-control-regex -- XML 1.0 allows exactly these control characters
    .replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
}
