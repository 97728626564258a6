import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import type { ResourceLedger } from './ledger.js'
import type { Offer, Resources } from './types.js'

/** The config's `provider.offer`: resources and prices, as the config states them. */
export type ConfigOffer = Resources & Pick<Offer, 'prices'>

/**
 * The offer is state: once onboarded (`dms onboard`, or an earlier start), the stored offer wins
 * and the config's `provider.offer` is ignored. The config's offer applies only when nothing was
 * ever onboarded (specs/config.md, "Offer precedence").
 */
export async function applyConfigOffer(
  ledger: ResourceLedger,
  offer: ConfigOffer | undefined,
  d: { clock: Clock; log: Logger },
): Promise<void> {
  const stored = ledger.getOffer()
  if (offer === undefined) {
    if (stored === undefined) d.log.warn("provider not onboarded: run 'dms onboard' to offer resources")
    return
  }
  if (stored !== undefined) {
    d.log.info(
      { stored: stored.resources, withdrawn: stored.withdrawnAt !== undefined },
      'using the onboarded offer from the database; provider.offer in the config is ignored',
    )
    return
  }
  const { prices, ...resources } = offer
  const now = d.clock.now()
  await ledger.setOffer({ resources, prices, onboardedAt: now, updatedAt: now })
}
