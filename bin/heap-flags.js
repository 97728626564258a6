// V8 settings the `dms` launcher (bin/dms.js) applies before it loads anything, for the processes
// that stay up (`dms run`, `dms contract-db run`), unless the user chose their own through
// NODE_OPTIONS or node's command line (theirs win). See specs/benchmarks.md, "Idle memory".
//
// The young generation stays at its initial size (1 MiB semi-spaces): by default V8 grows it to
// 16 MiB semi-spaces while DMS loads its modules, and an idle node keeps that memory, about 25 MB
// of its RSS. V8 reads the growth factor each time it would grow the space, so setting it at run
// time works; --max-semi-space-size is read only when the heap is created and cannot be.
// Short commands keep V8's default: it loads them faster (`dms --help`).

/** What the launcher sets. */
export const YOUNG_GENERATION_FLAGS = ['--semi-space-growth-factor=1']

/** The user's own young-generation settings (any of these in NODE_OPTIONS or on node's command line). */
const USER_SETTINGS = /^--(max-semi-space-size|min-semi-space-size|semi-space-growth-factor)(=|$)/

/**
 * Whether the dms arguments start a process that stays up: `run` or `contract-db run` (the first
 * words that are not options).
 * @param {readonly string[]} args
 */
export function staysUp(args) {
  const words = args.filter((a) => !a.startsWith('-'))
  return words[0] === 'run' || (words[0] === 'contract-db' && words[1] === 'run')
}

/**
 * The flags to set: none for a short command, or when the user's NODE_OPTIONS or node's command
 * line (execArgv) already set the young generation's size.
 * @param {string | undefined} nodeOptions
 * @param {readonly string[]} execArgv
 * @param {readonly string[]} args the dms arguments (process.argv after the script)
 * @returns {string[]}
 */
export function heapFlags(nodeOptions, execArgv, args) {
  if (!staysUp(args)) return []
  const given = [...(nodeOptions ?? '').split(/\s+/), ...execArgv].map((a) => a.replaceAll('_', '-'))
  return given.some((a) => USER_SETTINGS.test(a)) ? [] : YOUNG_GENERATION_FLAGS
}
