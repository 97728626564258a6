/**
 * What `dms onboard` / `PUT /v1/resources/offer` asks for, declared once (TypeBox): the REST
 * route checks a body with it (unknown fields refused) and `Onboarding.onboard` takes its type.
 * Every field is optional. Spec: specs/resources.md.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { strictObject, typed } from '../schema.js'
import type { Prices } from './types.js'

const opt = <T extends TSchema>(schema: T) => Type.Optional(schema)
/** A number, or text with a unit ("4GiB", "0.5"), read by dms/resources/units.ts. */
const amount = Type.Unsafe<number | string>({ type: ['number', 'string'], maxLength: 64 })
const price = Type.Integer({ minimum: 0 })

export const onboardRequestSchema = strictObject({
  /** CPU cores, e.g. 2 or "0.5". @default the current offer's, else all the machine allows */
  cpu: opt(amount),
  /** Memory: bytes or a size with a unit ("4GiB"). @default the current offer's, else all the machine allows */
  memory: opt(amount),
  /** Disk: bytes or a size with a unit ("20GiB"). @default the current offer's, else 10 GiB (capped) */
  disk: opt(amount),
  /** Indices of the GPUs offered (`MachineInfo.gpus[].index`). @default the current offer's, else none */
  gpus: opt(Type.Array(Type.Integer({ minimum: 0 }), { maxItems: 256 })),
  /** Prices per unit-hour and the minimum job price; fields left out keep the current (or default) price. */
  prices: opt(
    typed<Partial<Prices>>()(
      strictObject({
        perCpuHour: opt(price),
        perGiBMemoryHour: opt(price),
        perGiBDiskHour: opt(price),
        perGpuHour: opt(price),
        minJobPrice: opt(price),
      }),
    ),
  ),
})

/** What `dms onboard` / `PUT /v1/resources/offer` asks for. Every field is optional. */
export type OnboardRequest = Static<typeof onboardRequestSchema>
