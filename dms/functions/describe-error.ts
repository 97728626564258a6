/** The first ajv error of a descriptor check, as a field path and a problem (for the errors here). */
import type { ErrorObject } from 'ajv'

/** `e` as `[field, problem]`: the field as dotted path (`executables.0.path`). */
export function fieldProblem(e: ErrorObject | undefined): [string, string] {
  if (e === undefined) return ['', 'is invalid']
  const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.')
  const at = (f: string) => (path ? `${path}.${f}` : f)
  if (e.keyword === 'additionalProperties')
    return [at((e.params as { additionalProperty: string }).additionalProperty), 'unknown field']
  if (e.keyword === 'required')
    return [at((e.params as { missingProperty: string }).missingProperty), 'is required']
  return [path, e.message ?? 'is invalid']
}
