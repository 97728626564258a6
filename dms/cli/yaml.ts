/**
 * YAML for `-o yaml`: block style, two-space indent. A string that YAML could read as anything
 * else (a number, a boolean, null, a key, a comment, a multi-line text) is written double-quoted
 * with JSON escapes, which YAML reads back as the same string. `undefined` fields are left out, as
 * in JSON.
 */
const PLAIN = /^[A-Za-z_/][A-Za-z0-9 _./@+=-]*$/
const RESERVED = /^(?:true|false|yes|no|on|off|null|y|n|~)$/i

const scalar = (v: unknown): string | undefined => {
  if (v === null) return 'null'
  if (typeof v === 'boolean') return String(v)
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null'
  if (typeof v === 'bigint') return String(v)
  if (typeof v === 'string')
    return PLAIN.test(v) && !RESERVED.test(v) && !v.endsWith(' ') ? v : JSON.stringify(v)
  return undefined
}

const entries = (v: object): Array<[string, unknown]> =>
  Object.entries(v).filter(([, x]) => x !== undefined && typeof x !== 'function')

/** Lines of `v` at `indent` spaces; `v` is an object or an array with at least one item. */
function block(v: unknown, indent: number): string[] {
  const pad = ' '.repeat(indent)
  const lines: string[] = []
  const nested = (x: unknown): x is object =>
    typeof x === 'object' && x !== null && (Array.isArray(x) ? x.length > 0 : entries(x).length > 0)
  const inline = (x: unknown): string =>
    scalar(x) ?? (Array.isArray(x) ? '[]' : typeof x === 'object' && x !== null ? '{}' : 'null')
  if (Array.isArray(v)) {
    for (const item of v) {
      if (!nested(item)) {
        lines.push(`${pad}- ${inline(item === undefined ? null : item)}`)
        continue
      }
      // The item's first line goes after the dash; the rest keep its indent.
      const inner = block(item, indent + 2)
      lines.push(`${pad}- ${inner[0].slice(indent + 2)}`, ...inner.slice(1))
    }
    return lines
  }
  for (const [k, x] of entries(v as object)) {
    const key = scalar(k) ?? JSON.stringify(k)
    if (nested(x)) lines.push(`${pad}${key}:`, ...block(x, Array.isArray(x) ? indent : indent + 2))
    else lines.push(`${pad}${key}: ${inline(x)}`)
  }
  return lines
}

/** `v` (JSON-like data) as a YAML document, ending with a newline. */
export function toYaml(v: unknown): string {
  const nested =
    typeof v === 'object' && v !== null && (Array.isArray(v) ? v.length > 0 : entries(v).length > 0)
  return `${nested ? block(v, 0).join('\n') : (scalar(v) ?? (Array.isArray(v) ? '[]' : '{}'))}\n`
}
