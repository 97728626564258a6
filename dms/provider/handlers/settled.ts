/**
 * `/dms/contract/settled`: the contract-db tells the party that did not submit the settlement
 * (best effort). The provider has nothing to do with it yet: its allocation ended when its result
 * was delivered, and the settlement is the contract-db's record (a provider's own claim when its
 * requester never settles is not built yet). Accepted and dropped, so the sender sees no error.
 */
import type { Message } from '../../../actors/system.js'
import type { Settlement } from '../../contracts/model.js'

export function settledHandler() {
  return (_msg: Message<Settlement>): void => undefined
}
