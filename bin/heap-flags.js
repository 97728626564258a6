// V8 settings the `dms` launcher (bin/dms.js) applies before it loads anything, unless the user
// chose their own through NODE_OPTIONS or node's command line (theirs win). See
// specs/benchmarks.md, "Idle memory".
//
// The young generation stays at its initial size (1 MiB semi-spaces): by default V8 grows it to
// 16 MiB semi-spaces while DMS loads its modules, and an idle node keeps that memory, about 25 MB
// of its RSS. V8 reads the growth factor each time it would grow the space, so setting it at run
// time works; --max-semi-space-size is read only when the heap is created and cannot be.

/** What the launcher sets. */
export const YOUNG_GENERATION_FLAGS = ['--semi-space-growth-factor=1']

/** The user's own young-generation settings (any of these in NODE_OPTIONS or on node's command line). */
const USER_SETTINGS = /^--(max-semi-space-size|min-semi-space-size|semi-space-growth-factor)(=|$)/

/**
 * The flags to set: none when the user's NODE_OPTIONS or node's command line (execArgv) already
 * set the young generation's size.
 * @param {string | undefined} nodeOptions
 * @param {readonly string[]} execArgv
 * @returns {string[]}
 */
export function heapFlags(nodeOptions, execArgv) {
  const given = [...(nodeOptions ?? '').split(/\s+/), ...execArgv].map((a) => a.replaceAll('_', '-'))
  return given.some((a) => USER_SETTINGS.test(a)) ? [] : YOUNG_GENERATION_FLAGS
}
