/**
 * The spec reporter, and at the end the slowest test files by wall time: from the first suite of
 * a file starting to its last ending, so its hooks (nodes, engines, clusters started in `before`)
 * count, which the per-test times leave out. Used by scripts/test.sh.
 */
import Mocha from 'mocha'

const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_RUN_END } = Mocha.Runner.constants
const SHOWN = 25

export default class FileTimes extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options)
    const files = new Map<string, { start: number; end: number }>()
    runner.on(EVENT_SUITE_BEGIN, (suite: Mocha.Suite) => {
      if (suite.file && !files.has(suite.file)) files.set(suite.file, { start: Date.now(), end: Date.now() })
    })
    runner.on(EVENT_SUITE_END, (suite: Mocha.Suite) => {
      const f = suite.file === undefined ? undefined : files.get(suite.file)
      if (f) f.end = Date.now()
    })
    runner.once(EVENT_RUN_END, () => {
      const rows = [...files].map(([file, f]) => [file, f.end - f.start] as const).sort((a, b) => b[1] - a[1])
      const total = rows.reduce((s, r) => s + r[1], 0)
      const cwd = `${process.cwd()}/`
      const lines = [
        '',
        `  the slowest test files (wall time with hooks; ${rows.length} files, ${(total / 1000).toFixed(0)} s in all):`,
        ...rows
          .slice(0, SHOWN)
          .map(
            ([file, ms]) =>
              `  ${(ms / 1000).toFixed(1).padStart(7)} s  ${file.startsWith(cwd) ? file.slice(cwd.length) : file}`,
          ),
      ]
      process.stdout.write(`${lines.join('\n')}\n`)
    })
  }
}
