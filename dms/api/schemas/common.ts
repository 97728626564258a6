/**
 * What every route group's shapes (dms/api/schemas/*.ts) are built from: the TypeBox shorthands,
 * the error answer and the yes/no query flag.
 */
import { Type, type Static, type TProperties, type TSchema } from '@sinclair/typebox'
import { StringEnum } from '../../schema.js'

export const opt = <T extends TSchema>(schema: T) => Type.Optional(schema)
export const str = Type.String()
export const int = Type.Integer()
export const described = (description: string) => ({ description })
/**
 * Any JSON object (a stored record shown as it is); `additionalProperties` says so to a generated
 * client (`{ [key: string]: unknown }`, where a bare object type reads as an empty one).
 */
export const anyObject = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true })
/** A reply object whose fields are documented and all optional (as the routes have always said). */
export const reply = <P extends TProperties>(properties: P) => Type.Object(properties)

/** `{ error: { code, message, field? } }`: every error answer. */
export const ErrorReply = Type.Object({
  error: Type.Object({
    code: Type.String(described('stable, machine-readable (specs/rest-api.md, "Errors")')),
    message: str,
    field: opt(Type.String(described('the request field at fault, when there is one'))),
  }),
})
export type ApiError = Static<typeof ErrorReply>

/** A yes/no query flag, as text (`?follow=true`). */
export const flag = opt(StringEnum(['true', 'false', '1', '0']))
export const isSet = (v: string | undefined): boolean => v === 'true' || v === '1'
