/**
 * The bid request carries the workload's needs (specs/protocol.md, "Bid request: the workload's
 * needs"): never a member's command, env or working directory (they may hold secrets, and the
 * request is gossiped to every provider), and a hostile peer's needs are refused at decode, before
 * any work is done for them: over the byte cap before parsing, a bad shape, too many members,
 * absurd resources, or none at all (a requester of an older protocol).
 */
import assert from 'node:assert/strict'
import { canonicalJson } from '../../../actors/canonical-json.js'
import * as P from '../../../proto/dms.js'
import { W, dmsCodecs } from '../../../dms/protocol/behaviours.js'
import type { BidRequest } from '../../../dms/protocol/messages.js'
import { DOC_BYTES } from '../../../dms/protocol/shapes.js'
import { needsOf, needsTotals, type WorkloadNeeds } from '../../../dms/workload/needs.js'
import type { WorkloadMember } from '../../../dms/workload/workload.js'

const MiB = 1024 * 1024
const secretMember = (name: string): WorkloadMember => ({
  name,
  artifact: { kind: 'image', ref: 'dms-test:1' },
  command: ['sh', '-c', 'curl -H "Authorization: $API_KEY" https://example.test'],
  workdir: '/srv/secret-project',
  env: { API_KEY: 'sk-live-123' },
  network: 'outbound',
  resources: {
    cpu: 0.5,
    memoryBytes: 64 * MiB,
    diskBytes: 8 * MiB,
    gpus: { count: 1, model: 'H100', minMemoryBytes: 80e9 },
  },
})
const request = (workloadNeeds: WorkloadNeeds): BidRequest => ({
  jobId: 'j',
  workloadNeeds,
  maxDurationSeconds: 60,
  maxPrice: 1,
  deadline: 1,
  exclude: [],
})

describe('protocol: the bid request carries the workload needs', () => {
  const codecs = dmsCodecs(() => {})
  const encode = (r: BidRequest) => codecs.encode(W.bidRequest.name, r)
  const decode = (b: Uint8Array) => codecs.decode(W.bidRequest.name, b) as BidRequest
  /** Wire bytes of a request whose needs are `needs` as given, unchecked (a hostile peer's). */
  const hostile = (needs: unknown): Uint8Array =>
    P.BidRequest.encode({
      jobId: 'j',
      maxDurationSeconds: 60,
      maxPrice: 1,
      deadline: 1,
      exclude: [],
      workloadNeeds: new TextEncoder().encode(typeof needs === 'string' ? needs : canonicalJson(needs)),
    })

  it("keeps every member's name, artifact, network and resources, and none of its command, env or workdir", () => {
    const needs = needsOf({ members: [secretMember('a'), secretMember('b')] })
    const bytes = encode(request(needs))
    const text = Buffer.from(bytes).toString('latin1')
    for (const secret of ['sk-live-123', 'API_KEY', 'curl', '/srv/secret-project'])
      assert.equal(text.includes(secret), false, `${secret} went out in a gossiped bid request`)
    const got = decode(bytes).workloadNeeds
    assert.deepEqual(got, needs)
    assert.deepEqual(got.members[0], {
      name: 'a',
      artifact: { kind: 'image', ref: 'dms-test:1' },
      network: 'outbound',
      resources: {
        cpu: 0.5,
        memoryBytes: 64 * MiB,
        diskBytes: 8 * MiB,
        gpus: { count: 1, model: 'H100', minMemoryBytes: 80e9 },
      },
    })
  })

  it('refuses needs over the cap before parsing them', () => {
    const big = '{"members":[' + ' '.repeat(DOC_BYTES.needs) + ']}'
    assert.throws(() => decode(hostile(big)), { reason: 'too_long', message: /^BidRequest\.workloadNeeds / })
    // Under the cap, the same bytes are not JSON the check accepts: the cap, not the parser, refused.
    assert.throws(() => decode(hostile('{"members":[' + ' '.repeat(10) + ']}')), { reason: 'bad_shape' })
  })

  it('refuses needs that are absent (a requester of an older protocol), of a bad shape, or with a secret in them', () => {
    assert.throws(
      () =>
        decode(
          P.BidRequest.encode({ jobId: 'j', maxDurationSeconds: 60, maxPrice: 1, deadline: 1, exclude: [] }),
        ),
      {
        reason: 'bad_shape',
        message: /workloadNeeds is missing: the requester speaks an older protocol/,
      },
    )
    const [m] = needsOf({ members: [secretMember('a')] }).members
    const refused = (needs: unknown, field: RegExp) =>
      assert.throws(
        () => decode(hostile(needs)),
        (err: Error & { reason?: string }) => {
          assert.equal(err.reason, 'bad_shape')
          assert.match(err.message, field)
          return true
        },
      )
    refused({ members: [] }, /^BidRequest\.workloadNeeds\.members /)
    refused(
      { members: Array.from({ length: 9 }, (_, i) => ({ ...m, name: `m${i}` })) },
      /^BidRequest\.workloadNeeds\.members /,
    )
    refused({ members: [m, m] }, /^BidRequest\.workloadNeeds\.members\.1\.name repeats "a"/)
    refused({ members: [{ ...m, env: { API_KEY: 'x' } }] }, /^BidRequest\.workloadNeeds\.members\.0/)
    refused({ members: [{ ...m, command: ['x'] }] }, /^BidRequest\.workloadNeeds\.members\.0/)
    refused({ members: [m], extra: 1 }, /^BidRequest\.workloadNeeds/)
    refused({ members: [{ ...m, network: 'everywhere' }] }, /^BidRequest\.workloadNeeds\.members\.0\.network/)
    // Not JSON: refused by the parser (counted as bad_json).
    assert.throws(() => decode(hostile('[1,2')), SyntaxError)
  })

  it('refuses absurd resources: cpu past the maximum, GPUs past 64, memory and disk that add up past 2^53', () => {
    const [m] = needsOf({ members: [secretMember('a')] }).members
    const refused = (needs: unknown, field: RegExp) =>
      assert.throws(() => decode(hostile(needs)), { reason: 'bad_shape', message: field })
    const res = (r: object) => ({ members: [{ ...m, resources: { ...m.resources, ...r } }] })
    refused(res({ cpu: 1e9 }), /members\.0\.resources\.cpu/)
    refused(res({ cpu: -1 }), /members\.0\.resources\.cpu/)
    refused(res({ memoryBytes: 1.5 }), /members\.0\.resources\.memoryBytes/)
    refused(res({ gpus: { count: 65 } }), /members\.0\.resources\.gpus\.count/)
    refused(res({ gpus: { count: 1, minMemoryBytes: 1e300 } }), /members\.0\.resources\.gpus\.minMemoryBytes/)
    const huge = (name: string) => ({ ...m, name, resources: { cpu: 1, memoryBytes: 2 ** 52 } })
    refused({ members: [huge('a'), huge('b'), huge('c')] }, /members memoryBytes add up past 2\^53/)
    refused(res({ diskBytes: 1e300 }), /diskBytes add up past 2\^53/)
  })

  it("carries a pod's shared disk, which no member has on its own; refuses it on a plain job and out of bounds", () => {
    const pod = needsOf({ members: [secretMember('a'), secretMember('b')] }, 16 * MiB)
    assert.equal(pod.podDiskBytes, 16 * MiB)
    assert.deepEqual(
      needsTotals(decode(encode(request(pod))).workloadNeeds).diskBytes,
      16 * MiB + 2 * 8 * MiB,
    )
    assert.equal(needsOf({ members: [secretMember('a'), secretMember('b')] }).podDiskBytes, undefined)
    assert.equal(needsOf({ members: [secretMember('a')] }, 16 * MiB).podDiskBytes, undefined)
    const [m] = needsOf({ members: [secretMember('a')] }).members
    const refused = (needs: unknown, field: RegExp) =>
      assert.throws(() => decode(hostile(needs)), { reason: 'bad_shape', message: field })
    refused({ members: [m], podDiskBytes: MiB }, /podDiskBytes is a pod's/)
    const two = [m, { ...m, name: 'b' }]
    refused({ members: two, podDiskBytes: 0 }, /podDiskBytes/)
    refused({ members: two, podDiskBytes: 1.5 }, /podDiskBytes/)
    refused({ members: two, podDiskBytes: 2 ** 60 }, /podDiskBytes/)
    refused({ members: two, podDiskBytes: Number.MAX_SAFE_INTEGER }, /diskBytes add up past 2\^53/)
  })
})
