/**
 * `s` with control characters (C0, DEL, C1), line and paragraph separators and bidirectional
 * overrides written as `\uXXXX`: text that came from a peer, a job spec or a container (job names,
 * decline reasons, output paths) cannot move the cursor, recolour or rewrite the terminal.
 */
export function terminalSafe(s: string): string {
  let out = ''
  for (const ch of s) {
    const c = ch.codePointAt(0) as number
    const unsafe =
      c < 0x20 ||
      (c >= 0x7f && c <= 0x9f) ||
      c === 0x2028 ||
      c === 0x2029 ||
      (c >= 0x202a && c <= 0x202e) ||
      (c >= 0x2066 && c <= 0x2069)
    out += unsafe ? `\\u${c.toString(16).padStart(4, '0')}` : ch
  }
  return out
}
