/**
 * `/dms/contract/settled`: the contract-db tells the party that did not close the contract (best
 * effort): its settlement, a claim's, or an expiry. The provider keeps it in its books once it
 * checked it is the contract-db's signature for a contract of its books (books.ts); anything else
 * is dropped, so the sender sees no error.
 */
import type { Message } from '../../../actors/system.js'
import type { Settlement } from '../../contracts/model.js'
import type { ProviderBooks } from '../books.js'

export function settledHandler(d: { contractDb?: string; books?: Pick<ProviderBooks, 'settled'> } = {}) {
  return (msg: Message<Settlement>): void => {
    if (d.books === undefined || msg.peer !== d.contractDb) return
    void d.books.settled(msg.payload).catch(() => undefined)
  }
}
