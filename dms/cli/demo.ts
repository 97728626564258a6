import { ApiClient } from '../api/client.js'
import { verifyDoc } from '../contracts/canonical.js'
import { DOMAIN } from '../contracts/model.js'
import { publicKeyOfPeer } from '../contracts/party.js'
import { termsMaxDuration } from '../contracts/terms.js'
import { priceView } from '../pricing/price.js'
import { priceOf } from '../pricing/terms.js'
import { keyFromString } from '../../actors/identity.js'
import { startDevnet } from './devnet.js'
import { CliError, print } from './output.js'
import { follow } from './job.js'
import { demoWorkflow } from './demo-workflow.js'

const short = (peer: string) => `…${peer.slice(-10)}`
const ok = (b: boolean) => (b ? 'valid' : 'INVALID')

/**
 * `dms demo`: a devnet (`dms devnet`: contract-db, two providers, a requester as separate
 * processes on 127.0.0.1) that runs one real job in Docker to settlement, printing each step, then
 * a two-task workflow whose second task reads the first one's output.
 */
export async function demoCommand(opts: { image: string; keep?: boolean }): Promise<void> {
  const net = await startDevnet({
    providers: 2,
    prices: [3_600_000, 1_200_000],
    keep: opts.keep,
    say: print,
  })
  const { root, contractDb: cdb, requester: req } = net
  const dirs = { cdb: cdb.dataDir }
  const operator = net.operator
  try {
    const names: Record<string, string> = { [cdb.peerId]: 'contract-db', [req.peerId]: 'requester' }
    for (const p of net.providers) names[p.peerId] = p.name
    const api = new ApiClient(req.socket)

    const spec = {
      name: 'hello',
      image: opts.image,
      command: [
        'sh',
        '-c',
        'echo "hello from $(id -u) on $(hostname)"; echo -n 42 > /outputs/answer.txt; sleep 1',
      ],
      resources: { cpu: 0.5, memory: '64MiB' },
      maxDuration: 60,
      maxPrice: 100_000,
    }
    print(`\nPOST /v1/jobs  ${JSON.stringify(spec)}`)
    const { id } = await api.ok<{ id: string }>('POST', '/v1/jobs', spec)
    print(`job ${id}`)
    let t0: number | undefined
    const job = await follow(api, id, (h) =>
      print(`  ${String(h.at - (t0 ??= h.at)).padStart(6)} ms  ${h.state}`),
    )

    print('\nThe journey (amounts in micro-tokens)')
    for (const b of job.bids)
      print(
        `  bid from ${names[b.provider] ?? short(b.provider)}: ${priceView(priceOf(b)).price}, total ${b.total}`,
      )
    for (const d of job.declines)
      print(`  decline from ${names[d.provider] ?? short(d.provider)}: ${d.reasons.join('; ')}`)
    if (job.winner) print(`  winner: ${names[job.winner.provider]} (${job.winner.why})`)
    if (job.contract && job.proof) {
      const t = job.contract.terms
      const { signature, ...proofBody } = job.proof
      print(
        `  contract ${t.contractId}: escrow ${t.escrow}, ${priceView(priceOf(t.bid)).price}, max ${termsMaxDuration(t)}s`,
      )
      print(
        `    requester signature ${ok(verifyDoc(keyFromString(t.requester.publicKey), DOMAIN.contract, t, job.contract.requesterSignature))}`,
      )
      print(
        `    provider signature  ${ok(verifyDoc(keyFromString(t.provider.publicKey), DOMAIN.contract, t, job.contract.providerSignature ?? ''))}`,
      )
      print(
        `    contract-db proof   ${ok(verifyDoc(publicKeyOfPeer(cdb.peerId)!, DOMAIN.proof, proofBody, signature))}`,
      )
    }
    if (job.result) {
      const r = job.result.receipt.receipt
      print(
        `  allocation ${r.allocationId}: ${r.status}, exit code ${r.exitCode}, ${r.usage.wallSeconds.toFixed(2)}s wall`,
      )
      print(`    stdout: ${job.result.stdout.trim()}`)
      for (const f of job.result.outputs) {
        const file = await api.raw('GET', `/v1/jobs/${job.id}/outputs/${f.path}`)
        const shown =
          file.status === 200 ? JSON.stringify(file.body.toString()) : `(not fetched: ${file.status})`
        print(`    output ${f.path}: ${shown} sha256 ${f.sha256.slice(0, 16)}…`)
      }
      if (job.result.archive)
        print(
          `    outputs archive ${job.result.archive.sha256.slice(0, 16)}… (${job.result.archive.size} bytes), fetched from the provider`,
        )
    }
    if (job.verification)
      print(
        `  verification: outputs hash ${ok(job.verification.outputsHashOk)}, receipt signature ${ok(job.verification.receiptSignatureOk)}`,
      )
    if (job.settlement) {
      const s = job.settlement
      print(
        `  settlement: paid ${s.paidToProvider} to ${names[job.winner!.provider]} for ${s.billedSeconds.toFixed(2)}s, refunded ${s.refundedToRequester}`,
      )
      const { signature: sSig, ...sBody } = s
      print(
        `    contract-db settlement signature ${ok(verifyDoc(publicKeyOfPeer(cdb.peerId)!, DOMAIN.settlement, sBody, sSig))}`,
      )
      const cdbApi = new ApiClient(cdb.socket)
      for (const peer of [req.peerId, job.winner!.provider]) {
        const acc = await cdbApi.ok<{ balance: number; escrow: number }>(
          'GET',
          `/v1/contract-db/accounts/${peer}`,
        )
        print(`    balance of ${names[peer]}: ${acc.balance} (in escrow ${acc.escrow})`)
      }
      print(`\n$ dms contract-db contracts --data-dir ${dirs.cdb}`)
      print((await operator('contracts')).stdout.trimEnd())
    }
    print(`\njob ${id}: ${job.state}${job.error ? ` (${job.error.code}: ${job.error.message})` : ''}`)
    if (job.state !== 'completed') throw new CliError(`demo job ended ${job.state}; logs in ${root}`, 2)
    const wf = await demoWorkflow(api, opts.image)
    if (wf.state !== 'completed') throw new CliError(`demo workflow ended ${wf.state}; logs in ${root}`, 2)
  } finally {
    await net.stop()
  }
}
