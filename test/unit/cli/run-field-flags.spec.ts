/**
 * `dms job run`'s run-field flags come from one table (`RUN_FIELD_FLAGS`, dms/cli/flags.ts): each
 * is declared on the command, copied into the spec under the workload member's field name, and
 * refused with -f (specs/cli.md).
 */
import assert from 'node:assert/strict'
import { Command } from 'commander'
import { registerJob } from '../../../dms/cli/commands/job.js'
import { RUN_FIELD_FLAGS } from '../../../dms/cli/flags.js'
import { specFrom } from '../../../dms/cli/job-run.js'
import { CliError } from '../../../dms/cli/output.js'
import { RUN_FIELDS } from '../../../dms/workload/workload.js'

describe('dms job run: the run fields’ flags, from one table', () => {
  it('declares each flag on `job run` and copies it into the spec under its field', async () => {
    const program = new Command()
    registerJob(program, { defaultDataDir: '/tmp/x', socketOpt: ['--socket <path>', 'socket', '/tmp/s'] })
    const run = program.commands.find((c) => c.name() === 'job')?.commands.find((c) => c.name() === 'run')
    const longs = new Set(run?.options.map((o) => o.long))
    assert.ok(RUN_FIELD_FLAGS.length > 0)
    for (const f of RUN_FIELD_FLAGS) {
      assert.ok(RUN_FIELDS.includes(f.field), `${f.field} is a run field of the workload member`)
      assert.ok(longs.has(f.flag.split(' ')[0]), `${f.flag} is declared`)
      const opts = { socket: '/nowhere', image: 'dms-test:1', [f.field]: '/x' }
      const spec = (await specFrom(opts, ['pwd'])) as Record<string, unknown>
      assert.equal(spec[f.field], '/x')
      await assert.rejects(
        specFrom({ socket: '/nowhere', file: '/nowhere.json', [f.field]: '/x' }, []),
        (err: unknown) => err instanceof CliError && err.message.startsWith(f.flag.split(' ')[0]),
      )
    }
  })
})
