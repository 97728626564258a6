/**
 * `/dms/contract/started`: the provider's signed start note (specs/contract-db.md, "Start notes").
 * The provider sends it when it begins a run and starts the container only once it is answered.
 * Checked: the contract exists, the sender is its provider, the note is about it and signed by
 * the provider's key. Recorded once on the active contract (a repeated note gets the same answer,
 * also once the contract was settled or claimed, but not once it was terminated or expired); past the terms' `startBy` it is refused
 * START_DEADLINE_PASSED and the contract is expired at once with a full refund, both parties told.
 */
import type { Logger } from 'pino'
import type { Clock } from '../../../actors/clock.js'
import { keyFromString } from '../../../actors/identity.js'
import { verifyDoc } from '../../contracts/canonical.js'
import { REFUSAL, refuse } from '../../contracts/errors.js'
import { DOMAIN, type SignedStartNote, type StartAck } from '../../contracts/model.js'
import { START_DEADLINE_PASSED } from '../../contracts/start.js'
import type { ContractRecord } from '../records.js'
import type { ClosableContracts } from './closable.js'

export interface StartDeps {
  contracts: ClosableContracts
  clock: Pick<Clock, 'now'>
  /** This contract-db's peer id: it expires a contract that missed its startBy. */
  self: string
  log: Logger
}

export type StartHandler = (submitter: string, signed: SignedStartNote | undefined) => Promise<StartAck>

const ackOf = (rec: ContractRecord): StartAck => ({
  contractId: rec.contract.terms.contractId,
  startedAt: rec.started!.at,
})

export function startHandler(d: StartDeps): StartHandler {
  return async (submitter, signed) => {
    const note = signed?.note
    const rec = typeof note?.contractId === 'string' ? await d.contracts.get(note.contractId) : undefined
    if (rec === undefined) throw refuse(REFUSAL.unknown, `no contract ${String(note?.contractId)}`)
    const t = rec.contract.terms
    if (submitter !== t.provider.peer || note!.provider !== t.provider.peer)
      throw refuse(REFUSAL.notParty, `only the provider of contract ${t.contractId} sends its start note`)
    if (!verifyDoc(keyFromString(t.provider.publicKey), DOMAIN.startNote, note, signed!.signature))
      throw refuse(REFUSAL.badSignature, 'start note is not signed by the provider')
    const kept = { state: rec.state, settlement: rec.settlement }
    // A repeat gets the same answer while the run may go on; once the contract was terminated or
    // expired it may not (a provider that missed a cancel and restarted would run unpaid).
    if (rec.started !== undefined && rec.state !== 'terminated' && rec.state !== 'expired') return ackOf(rec)
    const missed = () =>
      refuse(
        START_DEADLINE_PASSED,
        `contract ${t.contractId} had to start by ${new Date(t.startBy ?? 0).toISOString()}: expired, the escrow refunded`,
        { startBy: t.startBy, ...kept },
      )
    if (rec.state === 'expired' && t.startBy !== undefined) throw missed()
    if (!d.contracts.accepts(rec, 'START'))
      throw refuse(REFUSAL.notActive, `contract ${t.contractId} is already ${rec.state}`, kept)
    if (t.startBy !== undefined && d.clock.now() > t.startBy) {
      const expired = await d.contracts.close(rec, {
        type: 'EXPIRE',
        by: d.self,
        detail: 'not started by startBy',
      })
      d.log.info({ contractId: t.contractId, startBy: t.startBy }, 'start note too late: contract expired')
      throw refuse(START_DEADLINE_PASSED, missed().message, {
        startBy: t.startBy,
        state: expired.state,
        settlement: expired.settlement,
      })
    }
    const started = await d.contracts.close(rec, { type: 'START', by: submitter, note: signed! })
    d.log.debug({ contractId: t.contractId }, 'contract started')
    return ackOf(started)
  }
}
