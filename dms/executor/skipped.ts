/**
 * Counts the entries output collection leaves out, by reason, with a few of their names, and says
 * so in a bounded, printable form for the receipt (`Receipt.outputsSkipped`).
 */
import { MAX_SKIPPED_DETAIL, type OutputsSkipped } from '../workload/outputs.js'

/** Names kept as examples, per reason. */
const SAMPLES_PER_REASON = 3
/** Bytes of a name shown in an example. */
const SAMPLE_BYTES = 48

export class SkipTally {
  private readonly byReason = new Map<string, { count: number; samples: string[] }>()
  private total = 0

  get count(): number {
    return this.total
  }

  /**
   * Records one entry left out: `reason` completes "N entries …" (e.g. "with a name that is not
   * UTF-8"); `path` is its path under /outputs, as raw bytes.
   */
  add(reason: string, path: Uint8Array): void {
    this.total++
    let r = this.byReason.get(reason)
    if (r === undefined) this.byReason.set(reason, (r = { count: 0, samples: [] }))
    r.count++
    if (r.samples.length < SAMPLES_PER_REASON) r.samples.push(showName(path))
  }

  /** What was left out, or undefined when nothing was. */
  result(): OutputsSkipped | undefined {
    if (this.total === 0) return undefined
    const parts = [...this.byReason].map(
      ([reason, r]) =>
        `${r.count} ${r.count === 1 ? 'entry' : 'entries'} ${reason} (${r.samples.join(', ')}${r.count > r.samples.length ? ', …' : ''})`,
    )
    let detail = parts.join('; ')
    if (detail.length > MAX_SKIPPED_DETAIL) detail = `${detail.slice(0, MAX_SKIPPED_DETAIL - 1)}…`
    return { count: this.total, detail }
  }
}

/**
 * A name as a person can read it whatever its bytes: printable ASCII as is, anything else (bytes
 * that are not UTF-8, control characters, quotes, non-ASCII) as `\xNN`, in double quotes, cut
 * after SAMPLE_BYTES bytes with the full length.
 */
export function showName(name: Uint8Array): string {
  let out = ''
  for (const b of name.subarray(0, SAMPLE_BYTES)) {
    out +=
      b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c
        ? String.fromCharCode(b)
        : `\\x${b.toString(16).padStart(2, '0')}`
  }
  return `"${out}${name.length > SAMPLE_BYTES ? `…" (${name.length} bytes)` : '"'}`
}
