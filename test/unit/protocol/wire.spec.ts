import assert from 'node:assert/strict'
import { container } from '../../helpers/workload.js'
import { plainNeeds } from '../../helpers/needs.js'
import { KeyPair, keyToString } from '../../../actors/identity.js'
import { issueApproval } from '../../../dms/contracts/approval.js'
import { issueFunds } from '../../../dms/contracts/funds.js'
import { signDoc, verifyDoc } from '../../../dms/contracts/canonical.js'
import { signStartNote } from '../../../dms/contracts/start.js'
import {
  DOMAIN,
  type ContractTerms,
  type SignedContract,
  type SignedReceipt,
} from '../../../dms/contracts/model.js'
import { W } from '../../../dms/protocol/behaviours.js'
import { dmsCodecs } from '../../../dms/protocol/behaviours.js'
import { ErrorReply } from '../../../proto/envelope.js'

const requester = KeyPair.generate()
const provider = KeyPair.generate()
const bidBody = {
  bidId: 'b-1',
  jobId: 'j-1',
  provider: '12D3KooWProv',
  resources: { cpu: 0.5, memoryBytes: 64 * 2 ** 20, diskBytes: 0, gpus: 0 },
  image: 'dms-test:1',
  maxDurationSeconds: 60,
  pricePerHour: 507,
  minJobPrice: 1,
  total: 9,
  earliestStart: 1,
  expectedFinish: 60_001,
  expiresAt: 30_001,
  resourcesReserved: true,
}
const bid = { ...bidBody, signature: signDoc(provider, DOMAIN.bid, bidBody) }
const terms: ContractTerms = {
  contractId: 'c-1',
  jobId: 'j-1',
  bidId: 'b-1',
  requester: { peer: '12D3KooWReq', publicKey: keyToString(requester.publicKey) },
  provider: { peer: '12D3KooWProv', publicKey: keyToString(provider.publicKey) },
  contractDb: '12D3KooWCdb',
  resources: { cpu: 0.5, memoryBytes: 64 * 2 ** 20, diskBytes: 0, gpus: 0 },
  image: 'dms-test:1',
  maxDurationSeconds: 60,
  pricePerHour: 507,
  escrow: 9,
  bid,
  createdAt: 1_700_000_000_000,
  expiresAt: 1_700_000_060_000,
}
const contract: SignedContract = {
  terms,
  requesterSignature: signDoc(requester, DOMAIN.contract, terms),
  providerSignature: signDoc(provider, DOMAIN.contract, terms),
}
const receiptBody = {
  contractId: 'c-1',
  jobId: 'j-1',
  allocationId: 'a-1',
  status: 'completed' as const,
  exitCode: 0,
  outputsHash: 'ab'.repeat(32),
  outputsSkipped: { count: 1, detail: '1 entry with a name that is not UTF-8 ("bad\\xff")' },
  usage: { wallSeconds: 1.3, cpuSeconds: 0.01, peakMemoryBytes: 1024 },
  finishedAt: 1_700_000_001_300,
}
const receipt: SignedReceipt = {
  receipt: receiptBody,
  signature: signDoc(provider, DOMAIN.receipt, receiptBody),
}
const proofBody = {
  contractId: 'c-1',
  termsHash: 'cd'.repeat(32),
  escrowLocked: 9,
  issuedAt: 1_700_000_000_500,
  contractDb: '12D3KooWCdb',
}
const proof = { ...proofBody, signature: 'sig' }
const verificationBody = {
  contractId: 'c-1',
  receiptHash: 'ef'.repeat(32),
  verified: true,
  outputsHashOk: true,
  receiptSignatureOk: true,
  verifiedAt: 1_700_000_001_400,
}
const verification = {
  verification: verificationBody,
  signature: signDoc(requester, DOMAIN.verification, verificationBody),
}
const settlement = {
  contractId: 'c-1',
  outcome: 'settled',
  paidToProvider: 1,
  refundedToRequester: 8,
  billedSeconds: 1.3,
  settledAt: 1_700_000_002_000,
  contractDb: '12D3KooWCdb',
  signature: 'sig',
}

const approval = issueApproval(KeyPair.generate(), {
  peer: '12D3KooWProv',
  contractDb: '12D3KooWCdb',
  now: 1_700_000_000_000,
})
const funds = issueFunds(KeyPair.generate(), {
  peer: '12D3KooWReq',
  contractDb: '12D3KooWCdb',
  available: 250_000,
  now: 1_700_000_000_000,
})

/** One sample payload per behaviour (and reply), as the code sends them. */
const samples: Array<[string, unknown]> = [
  [
    W.bidRequest.name,
    {
      jobId: 'j-1',
      workloadNeeds: plainNeeds('dms-test:1', terms.bid.resources),
      maxDurationSeconds: 60,
      maxPrice: 10_000,
      deadline: 1_700_000_003_000,
      exclude: ['12D3KooWBad'],
    },
  ],
  [
    W.directBidRequest.name,
    {
      jobId: 'j-1',
      workloadNeeds: plainNeeds('dms-test:1', terms.bid.resources),
      maxDurationSeconds: 60,
      maxPrice: 10_000,
      deadline: 1_700_000_003_000,
      exclude: [],
      approval,
    },
  ],
  [W.bid.name, { bid, approval }],
  [W.decline.name, { jobId: 'j-1', provider: '12D3KooWProv', reasons: ['not enough cpu: need 16 cores'] }],
  [W.jobRequest.name, { jobId: 'j-1', bidId: 'b-1' }],
  [`${W.jobRequest.name}#reply`, { locked: true, lockedUntil: 1_700_000_060_000 }],
  [W.contractSign.name, { contract }],
  [`${W.contractSign.name}#reply`, { providerSignature: contract.providerSignature }],
  [W.contractVerify.name, { contract }],
  [`${W.contractVerify.name}#reply`, proof],
  [
    W.invoke.name,
    {
      contract,
      proof,
      inputs: [{ path: 'd/in.txt', sha256: 'cd'.repeat(32), size: 5 }],
      workload: container({
        image: 'dms-test:1',
        command: ['sh', '-c', 'echo hi'],
        env: { A: '1', B: 'two' },
        cpu: 1,
        memoryBytes: 64 * 1024 * 1024,
      }),
    },
  ],
  [`${W.invoke.name}#reply`, { allocationId: 'a-1' }],
  [W.update.name, { jobId: 'j-1', allocationId: 'a-1', state: 'running', at: 5 }],
  [W.update.name, { jobId: 'j-1', allocationId: 'a-1', state: 'failed', at: 6, detail: 'OOMKilled' }],
  [
    W.result.name,
    {
      jobId: 'j-1',
      receipt,
      stdout: 'hi\n',
      stderr: '',
      truncated: false,
      outputs: [{ path: 'answer.txt', sha256: 'ef'.repeat(32), size: 2 }],
      archive: { sha256: 'ab'.repeat(32), size: 2048 },
    },
  ],
  [W.settle.name, { contractId: 'c-1', receipt, verification }],
  [W.contractStarted.name, { note: signStartNote(provider, 'p-1', 'c-1', 1_700_000_001_500) }],
  [`${W.contractStarted.name}#reply`, { contractId: 'c-1', startedAt: 1_700_000_001_600 }],
  [W.terminate.name, { contractId: 'c-1', reason: 'PROVIDER_FAULT', detail: 'provider silent' }],
  [W.terminate.name, { contractId: 'c-1', reason: 'REQUESTER_CANCELLED', receipt }],
  [`${W.terminate.name}#reply`, { ...settlement, outcome: 'terminated', reason: 'PROVIDER_FAULT' }],
  [`${W.settle.name}#reply`, settlement],
  [W.settled.name, settlement],
  [W.bidRelease.name, { jobId: 'j-1', bidId: 'b-2' }],
  [W.capacityNews.name, { provider: '12D3KooWProv', free: terms.resources, at: 1_700_000_000_000, approval }],
  [W.blobGet.name, { sha256: 'ab'.repeat(32), offset: 1048576, length: 65536 }],
  [`${W.blobGet.name}#reply`, { size: 2048, data: new Uint8Array([1, 2, 3]) }],
  [W.log.name, { jobId: 'j-1', allocationId: 'a-1', stream: 'stderr', seq: 3, data: 'warning\n' }],
  [W.bid.name, { bid }],
  [W.decline.name, { jobId: 'j-1', provider: '12D3KooWProv', reasons: ['offboarded'], approval }],
  [W.approval.name, {}],
  [`${W.approval.name}#reply`, approval],
  [
    W.bidRequest.name,
    {
      jobId: 'j-2',
      workloadNeeds: plainNeeds('dms-test:1', terms.bid.resources, true),
      maxDurationSeconds: 60,
      maxPrice: 10_000,
      deadline: 1_700_000_003_000,
      exclude: [],
      approval,
      funds,
    },
  ],
  [
    W.bidRequest.name,
    {
      jobId: 'q-1',
      workloadNeeds: plainNeeds('dms-test:1', terms.bid.resources),
      maxDurationSeconds: 60,
      maxPrice: 10_000,
      deadline: 1_700_000_003_000,
      exclude: [],
      approval,
      quote: true,
    },
  ],
  [W.balance.name, {}],
  [W.funds.name, {}],
  [`${W.funds.name}#reply`, funds],
  [W.blobRelease.name, { sha256: 'ab'.repeat(32), jobId: 'j-1' }],
  [`${W.blobRelease.name}#reply`, { removed: true }],
  [
    W.invoke.name,
    {
      contract,
      proof,
      inputs: [],
      workload: container({
        image: 'dms-test:1',
        command: ['ls'],
        network: true,
        cpu: 1,
        memoryBytes: 64 * 1024 * 1024,
      }),
    },
  ],
]

describe('dms/protocol (protobuf payload codecs)', () => {
  const codecs = dmsCodecs()

  it('every DMS behaviour is registered', () => {
    for (const { name } of Object.values(W)) assert.ok(codecs.has(name), `${name} has no codec`)
  })

  it('the behaviour names are the wire protocol (as in 0.1), one per behaviour', () => {
    assert.deepEqual(
      Object.values(W)
        .map((d) => d.name)
        .sort(),
      [
        '/dms/account/balance',
        '/dms/account/funds',
        '/dms/approval/get',
        '/dms/blob/get',
        '/dms/blob/release',
        '/dms/capacity/news',
        '/dms/contract/settle',
        '/dms/contract/settled',
        '/dms/contract/sign',
        '/dms/contract/started',
        '/dms/contract/terminate',
        '/dms/contract/verify',
        '/dms/job/bid',
        '/dms/job/bid-release',
        '/dms/job/bid-request',
        '/dms/job/bid-request-direct',
        '/dms/job/cancel',
        '/dms/job/decline',
        '/dms/job/invoke',
        '/dms/job/log',
        '/dms/job/request',
        '/dms/job/result',
        '/dms/job/result-again',
        '/dms/job/update',
      ],
    )
  })

  for (const [behaviour, payload] of samples) {
    it(`${behaviour} round-trips through protobuf unchanged`, () => {
      const bytes = codecs.encode(behaviour, payload)
      assert.ok(bytes instanceof Uint8Array)
      // Protobuf, not JSON text (signed documents inside are JSON, but the outer bytes are not).
      assert.notEqual(bytes[0], '{'.charCodeAt(0))
      assert.deepEqual(codecs.decode(behaviour, bytes), payload)
    })
  }

  it('signed documents keep verifying after the trip (they travel as their canonical JSON)', () => {
    const back = codecs.decode(W.contractVerify.name, codecs.encode(W.contractVerify.name, { contract })) as {
      contract: SignedContract
    }
    assert.ok(
      verifyDoc(requester.publicKey, DOMAIN.contract, back.contract.terms, back.contract.requesterSignature),
    )
    assert.ok(
      verifyDoc(provider.publicKey, DOMAIN.contract, back.contract.terms, back.contract.providerSignature!),
    )
    const r = codecs.decode(
      W.settle.name,
      codecs.encode(W.settle.name, { contractId: 'c-1', receipt, verification }),
    ) as {
      receipt: SignedReceipt
    }
    assert.ok(verifyDoc(provider.publicKey, DOMAIN.receipt, r.receipt.receipt, r.receipt.signature))
  })

  it('refuses garbage and documents of the wrong shape', () => {
    assert.throws(() => codecs.decode(W.bid.name, new Uint8Array([0xff, 0xff, 0xff])))
    assert.throws(
      () => codecs.decode(W.bidRequest.name, new Uint8Array(0)),
      /BidRequest\.workloadNeeds is missing: the requester speaks an older protocol/,
    )
    const badDoc = codecs.encode(W.contractSign.name, {
      contract: { ...contract, terms: { ...terms, escrow: '9' } },
    })
    assert.throws(() => codecs.decode(W.contractSign.name, badDoc), {
      name: 'DocumentShapeError',
      message: /contract\.terms\.escrow must be a number/,
    })
    assert.throws(
      () =>
        codecs.decode(
          W.terminate.name,
          codecs.encode(W.terminate.name, { contractId: 'c-1', reason: 'BECAUSE' }),
        ),
      /reason must be one of/,
    )
    // outputsSkipped is optional, but when present it has its shape.
    const { outputsSkipped: _, ...withoutSkipped } = receiptBody
    const plain = { receipt: withoutSkipped, signature: 'sig' }
    assert.deepEqual(
      codecs.decode(
        W.result.name,
        codecs.encode(W.result.name, {
          jobId: 'j-1',
          receipt: plain,
          stdout: '',
          stderr: '',
          truncated: false,
          outputs: [],
        }),
      ),
      { jobId: 'j-1', receipt: plain, stdout: '', stderr: '', truncated: false, outputs: [] },
    )
    const badSkipped = {
      receipt: { ...receiptBody, outputsSkipped: { count: '1', detail: 'x' } },
      signature: 's',
    }
    assert.throws(
      () =>
        codecs.decode(
          W.result.name,
          codecs.encode(W.result.name, {
            jobId: 'j-1',
            receipt: badSkipped,
            stdout: '',
            stderr: '',
            truncated: false,
            outputs: [],
          }),
        ),
      { name: 'DocumentShapeError', message: /receipt\.receipt\.outputsSkipped\.count must be a number/ },
    )
    const notJson = codecs.encode(W.settled.name, settlement)
    notJson[notJson.length - 1] = 0xff
    assert.throws(() => codecs.decode(W.settled.name, notJson))
  })

  it('refuses a field in another wire type, at the top, in a nested message and in a map entry', () => {
    const updateBytes = codecs.encode(W.update.name, {
      jobId: 'j-1',
      allocationId: 'a-1',
      state: 'running',
      at: 5,
    })
    // at (field 4, a varint) appended length-delimited: protons would misread it.
    assert.throws(
      () => codecs.decode(W.update.name, new Uint8Array([...updateBytes, (4 << 3) | 2, 1, 0x41])),
      {
        name: 'WireFormatError',
        message: /field 4 has wire type 2/,
      },
    )
    // Capacity news' free resources (field 2) whose cpu (field 1, a double) is a varint.
    const news = new Uint8Array([(1 << 3) | 2, 1, 0x6a, (2 << 3) | 2, 2, (1 << 3) | 0, 1])
    assert.throws(() => codecs.decode(W.capacityNews.name, news), /field 1 has wire type 0, expected 1/)
    // A bid request of protocol 3 (resources, field 2, instead of the needs): refused at the wire.
    const req = new Uint8Array([(1 << 3) | 2, 1, 0x6a, (2 << 3) | 2, 2, (1 << 3) | 0, 1])
    assert.throws(() => codecs.decode(W.bidRequest.name, req), /unknown field 2/)
    // An invocation of protocol 1 (command, field 3, instead of the workload): refused at the wire.
    const inv = codecs.encode(W.invoke.name, samples.find(([name]) => name === W.invoke.name)![1])
    assert.throws(
      () => codecs.decode(W.invoke.name, new Uint8Array([...inv, (3 << 3) | 2, 2, 0x73, 0x68])),
      /unknown field 3/,
    )
    assert.throws(() => codecs.decode(W.update.name, new Uint8Array([(9 << 3) | 0, 1])), /unknown field 9/)
  })

  it('an error reply is an ErrorReply with JSON data, for any behaviour', () => {
    const bytes = codecs.encode(`${W.contractVerify.name}#error`, {
      code: 'INSUFFICIENT_FUNDS',
      message: 'short by 3',
      data: { shortfall: 3 },
    })
    assert.equal(ErrorReply.decode(bytes).code, 'INSUFFICIENT_FUNDS')
    assert.deepEqual(codecs.decode(`/anything#error`, bytes), {
      code: 'INSUFFICIENT_FUNDS',
      message: 'short by 3',
      data: { shortfall: 3 },
    })
  })

  it('an unregistered behaviour falls back to JSON', () => {
    assert.deepEqual(codecs.decode('/test/x', codecs.encode('/test/x', { a: [1] })), { a: [1] })
  })
})
