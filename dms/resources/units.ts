/**
 * Human units for resource amounts: parsing what a person types (`4GiB`, `0.5`) and formatting
 * what we show them (`4 GiB`, `0.5 cores`).
 *
 * Sizes follow IEC: KiB/MiB/GiB/TiB are powers of 1024, KB/MB/GB/TB powers of 1000. The forms
 * people bring from other tools are read as those tools read them (issue 35): Docker's single
 * letters (`64m`, `1g`, either case) and Kubernetes' `Ki`/`Mi`/`Gi`/`Ti` are 1024-based. CPU takes
 * Kubernetes' millicores too (`500m` is half a core). specs/resources.md, "Amounts and units".
 */
import { DmsError } from '../../actors/errors.js'
import type { Resources } from './types.js'

/** A value a person typed could not be read as an amount; the message says why and what is accepted. */
export class UnitError extends DmsError {
  constructor(
    message: string,
    /** The value as given. */
    readonly value: unknown,
  ) {
    super('INVALID_UNIT', message)
  }
}

const BINARY: Record<string, number> = { kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4 }
const DECIMAL: Record<string, number> = { kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12 }
// Docker's `-m 64m` and Kubernetes' `64Mi` (units are compared in lower case).
const HABITS: Record<string, number> = {
  k: 1024,
  m: 1024 ** 2,
  g: 1024 ** 3,
  t: 1024 ** 4,
  ki: 1024,
  mi: 1024 ** 2,
  gi: 1024 ** 3,
  ti: 1024 ** 4,
}
const BYTE_UNITS: Record<string, number> = { '': 1, b: 1, ...BINARY, ...DECIMAL, ...HABITS }

const ACCEPTED_BYTES =
  'a number of bytes, or a number followed by one of B, KiB, MiB, GiB, TiB (1024-based, also written Ki, Mi, Gi, Ti or k, m, g, t) or KB, MB, GB, TB (1000-based), e.g. 4GiB, 512MiB or 64m'

const NUMBER_WITH_UNIT = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?)\s*([a-z]*)$/i

/**
 * Reads a size in bytes: `'4GiB'`, `'512 MiB'`, `'1.5GB'`, `'1024'` (bare numbers are bytes).
 * Units are case-insensitive. A number is taken as bytes.
 * @throws UnitError for negatives, non-numbers, unknown units, fractional bytes and sizes beyond 2^53.
 */
export function parseBytes(input: string | number): number {
  const text = typeof input === 'number' ? String(input) : input.trim()
  const shown = JSON.stringify(input)
  const m = NUMBER_WITH_UNIT.exec(text)
  if (m === null) throw new UnitError(`invalid size ${shown}: expected ${ACCEPTED_BYTES}`, input)
  const value = Number(m[1])
  const unit = m[2].toLowerCase()
  if (!Number.isFinite(value)) throw new UnitError(`invalid size ${shown}: not a finite number`, input)
  if (value < 0) throw new UnitError(`invalid size ${shown}: a size cannot be negative`, input)
  const multiplier = BYTE_UNITS[unit]
  if (multiplier === undefined) {
    throw new UnitError(`invalid size ${shown}: unknown unit "${m[2]}"; expected ${ACCEPTED_BYTES}`, input)
  }
  if (multiplier === 1 && !Number.isInteger(value)) {
    throw new UnitError(`invalid size ${shown}: bytes must be a whole number`, input)
  }
  const bytes = Math.round(value * multiplier)
  if (!Number.isSafeInteger(bytes)) {
    throw new UnitError(
      `invalid size ${shown}: too large (at most ${formatBytes(Number.MAX_SAFE_INTEGER)})`,
      input,
    )
  }
  return bytes
}

const FORMAT_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB']

/** Formats bytes with the largest 1024-based unit that keeps the number >= 1: `'4 GiB'`, `'1.5 MiB'`, `'0 B'`. */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return String(n)
  if (n < 0) return `-${formatBytes(-n)}`
  let i = 0
  while (i < FORMAT_UNITS.length - 1 && n >= 1024 ** (i + 1)) i++
  let v = Number((n / 1024 ** i).toFixed(2))
  // 1023.999 KiB rounds to 1024 KiB: show 1 MiB instead.
  if (v >= 1024 && i < FORMAT_UNITS.length - 1) {
    i++
    v = Number((n / 1024 ** i).toFixed(2))
  }
  return `${v} ${FORMAT_UNITS[i]}`
}

const DECIMAL_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/
// Kubernetes' millicores: whole, at most 9 digits (a million cores), lower-case `m` only.
const MILLICORES = /^(\d{1,9})m$/

/**
 * Reads a number of CPU cores: `'2'`, `'0.5'`, or millicores: `'500m'` (0.5).
 * @throws UnitError for non-numbers and values <= 0.
 */
export function parseCpu(input: string | number): number {
  const text = typeof input === 'number' ? String(input) : input.trim()
  const shown = JSON.stringify(input)
  const accepted = 'expected a number of CPU cores greater than 0, e.g. 2 or 0.5, or millicores, e.g. 500m'
  const milli = MILLICORES.exec(text)
  if (milli !== null) {
    const value = Number(milli[1]) / 1000
    if (value <= 0) throw new UnitError(`invalid CPU amount ${shown}: ${accepted}`, input)
    return value
  }
  if (!DECIMAL_NUMBER.test(text)) throw new UnitError(`invalid CPU amount ${shown}: ${accepted}`, input)
  const value = Number(text)
  if (!Number.isFinite(value) || value <= 0) {
    throw new UnitError(`invalid CPU amount ${shown}: ${accepted}`, input)
  }
  return value
}

/**
 * Reads a whole number written in decimal digits, 0 or more: `'300'`. Unlike `Number()`, refuses
 * `'0x10'`, `'1e3'`, `''` and values above 2^53−1.
 * @throws UnitError naming `what` (e.g. "seconds").
 */
export function parseWholeNumber(input: string, what: string): number {
  const text = input.trim()
  const value = Number(text)
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value))
    throw new UnitError(
      `invalid number of ${what} ${JSON.stringify(input)}: expected a whole number in decimal digits, e.g. 300`,
      input,
    )
  return value
}

/** `'1 core'`, `'0.5 cores'`, `'2 cores'`. */
export function formatCpu(n: number): string {
  const v = Number(n.toFixed(3))
  return `${v} ${v === 1 ? 'core' : 'cores'}`
}

/** `'1 GPU'`, `'0 GPUs'`. */
export function formatGpus(n: number): string {
  return `${n} ${n === 1 ? 'GPU' : 'GPUs'}`
}

/** `'2 cores, 4 GiB memory, 10 GiB disk, 0 GPUs'`. */
export function formatResources(r: Resources): string {
  return `${formatCpu(r.cpu)}, ${formatBytes(r.memoryBytes)} memory, ${formatBytes(r.diskBytes)} disk, ${formatGpus(r.gpus)}`
}
