import assert from 'node:assert/strict'
import { imageRefProblem, InvalidImageRefError, parseImageRef } from '../../../dms/workload/image-ref.js'

const HEX64 = 'a'.repeat(64)

describe('workload/image-ref: the reference grammar shared by API, provider and executor', () => {
  it('reads names, registries, ports, tags and digests, and gives one canonical form per image', () => {
    const cases: Array<[string, { registry: string; path: string; tag?: string; canonical: string }]> = [
      [
        'dms-test:1',
        {
          registry: 'docker.io',
          path: 'library/dms-test',
          tag: '1',
          canonical: 'docker.io/library/dms-test:1',
        },
      ],
      [
        'busybox',
        { registry: 'docker.io', path: 'library/busybox', canonical: 'docker.io/library/busybox:latest' },
      ],
      [
        'library/busybox:latest',
        {
          registry: 'docker.io',
          path: 'library/busybox',
          tag: 'latest',
          canonical: 'docker.io/library/busybox:latest',
        },
      ],
      [
        'index.docker.io/library/busybox',
        { registry: 'docker.io', path: 'library/busybox', canonical: 'docker.io/library/busybox:latest' },
      ],
      [
        'me/app_1.x__y-z---w:v1.2-rc_3',
        {
          registry: 'docker.io',
          path: 'me/app_1.x__y-z---w',
          tag: 'v1.2-rc_3',
          canonical: 'docker.io/me/app_1.x__y-z---w:v1.2-rc_3',
        },
      ],
      [
        'registry.example/team/app:2',
        {
          registry: 'registry.example',
          path: 'team/app',
          tag: '2',
          canonical: 'registry.example/team/app:2',
        },
      ],
      [
        'localhost:5000/app',
        { registry: 'localhost:5000', path: 'app', canonical: 'localhost:5000/app:latest' },
      ],
      ['127.0.0.1:1/x', { registry: '127.0.0.1:1', path: 'x', canonical: '127.0.0.1:1/x:latest' }],
      ['[::1]:5000/x', { registry: '[::1]:5000', path: 'x', canonical: '[::1]:5000/x:latest' }],
      [
        'Registry.Example/app',
        { registry: 'Registry.Example', path: 'app', canonical: 'Registry.Example/app:latest' },
      ],
      [
        `app:1@sha256:${HEX64}`,
        {
          registry: 'docker.io',
          path: 'library/app',
          tag: '1',
          canonical: `docker.io/library/app@sha256:${HEX64}`,
        },
      ],
    ]
    for (const [ref, want] of cases) {
      const got = parseImageRef(ref)
      assert.deepEqual(
        { registry: got.registry, path: got.path, tag: got.tag, canonical: got.canonical },
        { tag: undefined, ...want },
        ref,
      )
      assert.equal(imageRefProblem(ref), undefined, ref)
    }
    assert.equal(parseImageRef(`x@sha512:${'b'.repeat(128)}`).digest, `sha512:${'b'.repeat(128)}`)
  })

  it('refuses path tricks, host:port smuggling, shell text, upper case, a leading dash and oversize parts', () => {
    const bad: Array<[string, RegExp]> = [
      ['../../containers/json', /registry "\.\." is not a host name/],
      ['a//b', /empty path component/],
      ['x/./y', /path component "\."/],
      ['x/../y', /path component "\.\."/],
      ['/abs', /empty path component/],
      ['trailing/', /empty path component/],
      ['..', /path component "\.\."/],
      ['a/b/../../../v1.41/containers/create', /path component "\.\."/],
      ['127.0.0.1:99999/x', /not a port number/],
      ['host:port/x', /not a port number/],
      ['Upper:1', /must be lowercase/],
      ['-rm', /path component "-rm"/],
      ['img;rm -rf /', /path component/],
      ['$(id)', /path component/],
      ['a b', /path component/],
      ['img\0x', /path component/],
      ['img\n', /path component/],
      ['img:', /tag ""/],
      ['img:-x', /tag "-x"/],
      [`img:${'t'.repeat(129)}`, /tag/],
      ['img@sha256:abc', /sha256 digest must be 64 lowercase hex/],
      [`img@sha256:${'A'.repeat(64)}`, /lowercase hex/],
      [`img@md5:${'a'.repeat(32)}`, /not sha256, sha384 or sha512/],
      ['', /is empty/],
      [':tag', /has no name/],
      [`${'a'.repeat(256)}`, /name longer than 255/],
      [`a/${'b'.repeat(600)}`, /longer than 512/],
    ]
    for (const [ref, why] of bad) {
      assert.throws(
        () => parseImageRef(ref),
        (err: unknown) =>
          err instanceof InvalidImageRefError && err.code === 'INVALID_IMAGE_REF' && why.test(err.problem),
        JSON.stringify(ref),
      )
      assert.match(imageRefProblem(ref) ?? '', why)
    }
    assert.equal(imageRefProblem(42), 'must be a string')
  })
})
