/**
 * `dms devnet --provider-config FILE`: a JSON object merged into each devnet provider's
 * `provider` config section (e.g. the process engine and a GPU offer on a GPU host: scripts/gpu-host-check.sh).
 */
import { readFile, stat } from 'node:fs/promises'
import { CliError } from './output.js'

/** A read `--provider-config` file: what it says and how errors name it. */
export interface ProviderConfigFile {
  /** `--provider-config FILE`, for errors. */
  from: string
  /** The fields merged into the `provider` section. */
  section: Record<string, unknown>
}

/** `over` merged into `base`: plain objects key by key, anything else (arrays too) replaced. */
export function mergeSection(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base }
  for (const [k, v] of Object.entries(over)) {
    // A JSON "__proto__" key is an own property: assigning it would set the prototype instead.
    if (k === '__proto__' || k === 'constructor' || k === 'prototype')
      throw new CliError(`field "${k}" is not allowed`)
    const b = out[k]
    const plain = (x: unknown): x is Record<string, unknown> =>
      typeof x === 'object' && x !== null && !Array.isArray(x)
    out[k] = plain(b) && plain(v) ? mergeSection(b, v) : v
  }
  return out
}

/**
 * Reads a `--provider-config` file: a JSON object (at most 1 MiB), or a CliError naming the file.
 * Its fields are checked later, against the node config schema, by `startDevnet`.
 */
export async function readProviderConfig(file: string): Promise<ProviderConfigFile> {
  const from = `--provider-config ${file}`
  const cannot = (err: unknown): never => {
    throw new CliError(`${from}: cannot read it (${(err as Error).message})`)
  }
  // Sized before it is read: a device or a huge file by mistake is refused, not slurped.
  const st = await stat(file).catch(cannot)
  if (!st.isFile() || st.size > 1024 * 1024)
    throw new CliError(`${from}: not a file of at most 1 MiB; a provider section is a few lines`)
  const text = await readFile(file, 'utf8').catch(cannot)
  let section: unknown
  try {
    section = JSON.parse(text)
  } catch (err) {
    throw new CliError(`${from}: not JSON (${(err as Error).message})`)
  }
  if (typeof section !== 'object' || section === null || Array.isArray(section))
    throw new CliError(`${from}: must be a JSON object (the "provider" section of a node config)`)
  return { from, section: section as Record<string, unknown> }
}
