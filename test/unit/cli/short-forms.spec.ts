/**
 * The short forms people type from Docker and kubectl (issue 35), on every group that has the
 * command: `ls`, `describe`, `stop`, `logs -f`, `run -e`. Read from the command tree that
 * `dms` registers, so a group added later without them is caught here.
 */
import assert from 'node:assert/strict'
import { Command } from 'commander'
import { COMMANDS } from '../../../dms/cli/commands/index.js'

function program(): Command {
  const p = new Command('dms')
  for (const register of COMMANDS)
    register(p, { defaultDataDir: '/nowhere', socketOpt: ['--socket <path>', 's', '/nowhere/s'] })
  return p
}

const sub = (c: Command, ...names: string[]): Command =>
  names.reduce((at, n) => {
    const found = at.commands.find((x) => x.name() === n)
    assert.ok(found, `no command ${n}`)
    return found
  }, c)

describe('short forms (issue 35)', () => {
  const aliases: Array<[string, string]> = [
    ['list', 'ls'],
    ['status', 'describe'],
    ['cancel', 'stop'],
  ]
  for (const group of ['job', 'queue', 'workflow'])
    for (const [name, alias] of aliases)
      it(`dms ${group} ${alias} is dms ${group} ${name}`, () => {
        assert.ok(sub(program(), group, name).aliases().includes(alias))
      })

  it('job run -e is --env, job logs -f and workflow logs -f are --follow', () => {
    const p = program()
    assert.equal(sub(p, 'job', 'run').options.find((o) => o.short === '-e')?.long, '--env')
    assert.equal(sub(p, 'job', 'quote').options.find((o) => o.short === '-e')?.long, '--env')
    assert.equal(sub(p, 'job', 'logs').options.find((o) => o.short === '-f')?.long, '--follow')
    assert.equal(sub(p, 'workflow', 'logs').options.find((o) => o.short === '-f')?.long, '--follow')
  })
})
