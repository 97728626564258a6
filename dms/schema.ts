/**
 * Helpers for the shapes declared once with TypeBox (the config, the job spec, the REST bodies and
 * replies): each schema gives the ajv check, the TypeScript type (`Static<>`), the Fastify route
 * schema and the OpenAPI document. The schemas are plain JSON Schema (TypeBox's own markers are
 * symbols, which JSON and ajv do not see).
 */
import {
  Type,
  type SchemaOptions,
  type Static,
  type TObject,
  type TProperties,
  type TSchema,
  type TUnsafe,
} from '@sinclair/typebox'
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv'

/** `true` when A and B are the same type (not merely assignable either way). */
type Same<A, B> = (<G>() => G extends A ? 1 : 2) extends <G>() => G extends B ? 1 : 2 ? true : false

/**
 * A schema whose TypeScript type is `T`, a type its component declares (an `Init`, a request):
 * the config refers to the component's type instead of declaring it again. Checked when compiled:
 * if the schema's own type is not exactly `T` the call does not type-check ("Expected 4 arguments":
 * the extra parameters show the schema's type and `T` side by side).
 *
 * @example const cap = typed<RequesterCap>()(Type.Object({ maxOpenBids: Type.Optional(posInt) }))
 */
export function typed<T>() {
  return <S extends TSchema>(
    schema: S,
    ..._check: Same<Static<S>, T> extends true ? [] : [schemaType: Static<S>, differsFrom: T, _: never]
  ): TUnsafe<T> => schema as unknown as TUnsafe<T>
}

/** An object that refuses unknown fields (every object a user or peer sends). */
export const strictObject = <P extends TProperties>(properties: P, options: SchemaOptions = {}): TObject<P> =>
  Type.Object(properties, { additionalProperties: false, ...options })

/**
 * One of a few strings, as `{ type: 'string', enum: [...] }` (TypeBox's own unions of literals
 * become `anyOf`, whose ajv error says less: "must be one of ..." names the choices).
 */
export const StringEnum = <const T extends readonly string[]>(
  values: T,
  options: SchemaOptions = {},
): TUnsafe<T[number]> => Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })

/**
 * An object used as a map from any key to `value`, as `{ type: 'object', additionalProperties }`
 * (TypeBox's `Record` says the same with a catch-all `patternProperties`).
 */
export const StringMap = <V extends TSchema>(
  value: V,
  options: SchemaOptions = {},
): TUnsafe<Record<string, Static<V>>> =>
  Type.Unsafe<Record<string, Static<V>>>({ type: 'object', ...options, additionalProperties: value })

/** Exactly `value`, as `{ const: value }` (TypeBox's `Literal` adds the type, saying the same twice). */
export const Const = <const T extends string | number | boolean>(value: T): TUnsafe<T> =>
  Type.Unsafe<T>({ const: value })

// Schema checks compiled when first needed, not when their module loads. Each compiled ajv check
// is generated code that costs 1-3 MB of heap; a node that never meets a job spec, a workflow or
// a given REST route never pays for its check (specs/benchmarks.md, "Idle memory").

/**
 * `schema`'s check, compiled at the first call. `keep: 'weak'`: held only while in use, for a
 * check made once per process (the config at start), which a running node then lets go.
 */
export function compileOnUse<T = unknown>(
  schema: object,
  options: Options,
  keep: 'strong' | 'weak' = 'strong',
): () => ValidateFunction<T> {
  let strong: ValidateFunction<T> | undefined
  let weak: WeakRef<ValidateFunction<T>> | undefined
  return () => {
    const have = strong ?? weak?.deref()
    if (have !== undefined) return have
    const v = new Ajv(options).compile<T>(schema)
    if (keep === 'strong') strong = v
    else weak = new WeakRef(v)
    return v
  }
}

/** A fastify validator (setValidatorCompiler) whose schema `ajv` compiles at the route's first request. */
export function validatorOnUse(
  ajv: Ajv,
  schema: object,
): ((data: unknown) => boolean) & { errors?: ErrorObject[] | null } {
  let check: ValidateFunction | undefined
  const validator = (data: unknown): boolean => {
    check ??= ajv.compile(schema)
    const ok = check(data)
    // fastify reads a failed check's errors from the function it was given.
    validator.errors = check.errors
    return ok
  }
  validator.errors = undefined as ErrorObject[] | null | undefined
  return validator
}
