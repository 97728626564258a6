/**
 * Records stored by dms 0.1 (test/fixtures/v0.1, written by scripts/capture-fixtures.ts from real
 * nodes) are loaded by today's code (the suite: test/helpers/restore-suite.ts). 0.1 kept the
 * provider's bids and allocations in two tables apart, moved to one record per bid at start
 * (dms/provider/migrate-v01.ts). A change of a record's shape keeps this green with a migration.
 */
import { STORES } from '../../../dms/store/tables.js'
import type { AllocationRecord, BidRecord } from '../../../dms/provider/provider.js'
import { recordsOf } from '../../helpers/fixtures.js'
import { restoreSuite } from '../../helpers/restore-suite.js'

restoreSuite('v0.1', 'dms 0.1', {
  allocations: (f, jobId) =>
    recordsOf<AllocationRecord>(f, STORES.v01Allocations.name)
      .filter((a) => a.jobId === jobId)
      .map((a) => ({ allocationId: a.allocationId, state: a.state })),
  bidCount: (f) => recordsOf<BidRecord>(f, STORES.v01Bids.name).length,
})
