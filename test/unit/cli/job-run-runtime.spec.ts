/**
 * `dms job run --runtime PATH -- args...` (specs/cli.md): the spec names the runtime and its
 * command starts with it; --image with --runtime, or --runtime with -f, is refused.
 */
import assert from 'node:assert/strict'
import { specFrom } from '../../../dms/cli/job-run.js'
import { CliError } from '../../../dms/cli/output.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'

describe('dms job run --runtime', () => {
  it("posts the runtime with the arguments after -- as the command's rest", async () => {
    const spec = (await specFrom({ socket: '/nowhere', runtime: '/bin/sh' }, [
      '-c',
      'echo hi > /outputs/a',
    ])) as Record<string, unknown>
    assert.equal(spec.runtime, '/bin/sh')
    assert.equal(spec.image, undefined)
    assert.deepEqual(spec.command, ['/bin/sh', '-c', 'echo hi > /outputs/a'])
    assert.equal(parseJobSpec(spec, Date.now()).image, 'runtime:/bin/sh', 'a spec the node takes')
    const bare = (await specFrom({ socket: '/nowhere', runtime: '/usr/bin/python3' }, [])) as {
      command: string[]
    }
    assert.deepEqual(bare.command, ['/usr/bin/python3'], 'a runtime needs no arguments')
  })

  it('refuses --image with --runtime, and --runtime with -f', async () => {
    await assert.rejects(
      specFrom({ socket: '/nowhere', runtime: '/bin/sh', image: 'dms-test:1' }, ['-c', ':']),
      (err: unknown) => err instanceof CliError && /--image and --runtime: give one/.test(err.message),
    )
    await assert.rejects(
      specFrom({ socket: '/nowhere', file: '/nowhere.json', runtime: '/bin/sh' }, []),
      (err: unknown) => err instanceof CliError && err.message.startsWith('--runtime'),
    )
  })
})
