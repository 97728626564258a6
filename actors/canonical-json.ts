/**
 * Canonical JSON: object keys sorted at every level, undefined fields left out. The byte form in
 * which documents are signed and values hashed: two parties that hold equal values get equal bytes,
 * whatever order their keys were built in.
 */

/** JSON with object keys sorted at every level: the byte form that documents are signed in. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value))
      throw new Error('cannot sign a non-finite number')
    return JSON.stringify(value)
  }
  // As JSON.stringify does: an undefined element is null, so a signature survives a JSON round trip.
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`
  const obj = value as Record<string, unknown>
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort()
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`
}
