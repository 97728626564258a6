/** Descriptors for the functions' unit tests. */

/** A blob id ending in `c`. */
export const h = (c: string) => '0'.repeat(63) + c

/** A valid descriptor, with `patch` merged over it. */
export const worker = (patch: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'upper',
  hostPlatform: 'linux',
  buildSystemVersion: 'bsv-1',
  executables: [{ path: 'run.sh', sha256: h('a'), size: 10 }],
  files: [{ path: 'lib/words.txt', sha256: h('b'), size: 20 }],
  dirs: ['cache'],
  environment: { LANG: 'C' },
  cores: 1,
  timeout: 60,
  functions: [{ name: 'upper', version: '1.0' }],
  ...patch,
})
