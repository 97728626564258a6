/** `provider.engines` (specs/config.md): the engines a provider offers, checked at load. */
import assert from 'node:assert/strict'
import { ConfigError, loadNodeConfig } from '../../../dms/config.js'

const CDB = '12D3KooWJQrvaMvVy9RQ6bN3CXC7V2ju9SCjisqSYshAjur2e6f4'
const load = (engines: unknown) =>
  loadNodeConfig({ dataDir: 'd', provider: { contractDb: CDB, engines } }, {}, 'config c.json')

describe('config: provider.engines', () => {
  it('takes the engines there are, and leaves the default to the node', () => {
    assert.deepEqual(load(['docker']).provider?.engines, ['docker'])
    assert.deepEqual(load(['process']).provider?.engines, ['process'])
    assert.deepEqual(load(['process', 'docker']).provider?.engines, ['process', 'docker'])
    assert.equal(
      loadNodeConfig({ dataDir: 'd', provider: { contractDb: CDB } }, {}, 'c').provider?.engines,
      undefined,
    )
  })

  it('refuses an engine there is not, none at all, and one twice', () => {
    for (const bad of [['podman'], [], ['docker', 'docker'], 'docker']) {
      assert.throws(
        () => load(bad),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError)
          assert.match(err.field ?? '', /^provider\.engines/)
          return true
        },
      )
    }
  })

  it("takes the process engine's runtimes, absolute plain paths only", () => {
    const withRuntimes = (runtimes: unknown) =>
      loadNodeConfig(
        { dataDir: 'd', provider: { contractDb: CDB, engines: ['process'], process: { runtimes } } },
        {},
        'c',
      )
    assert.deepEqual(withRuntimes(['/bin/sh']).provider?.process?.runtimes, ['/bin/sh'])
    for (const bad of [['sh'], ['/usr/../bin/sh'], [], ['/bin/sh', '/bin/sh']])
      assert.throws(
        () => withRuntimes(bad),
        (err: unknown) => err instanceof ConfigError && /^provider\.process\.runtimes/.test(err.field ?? ''),
      )
  })
})
