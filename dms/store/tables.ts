/**
 * Every table (level sublevel) of a node's and a contract-db's database, declared once (Lodestar's
 * `db/buckets.ts`): no two parts can take the same name, and the whole stored layout reads here.
 * `version` is the version of the records a table holds today; a change of a record's shape bumps
 * it and comes with a migration that reads the older version (test/fixtures/ keeps records of
 * earlier releases, restored by test/integration/restore/). The names are what is on disk: never
 * rename one.
 */

/** One table: its sublevel name on disk and the version of the records it holds. */
export interface StoreTable {
  readonly name: string
  readonly version: number
  /** What it holds, and who writes it. */
  readonly what: string
}

export const STORES = {
  // Every node:
  blobGrants: { name: 'blob-grants', version: 1, what: 'blob grants to peers (blobs/service.ts)' },
  approval: {
    name: 'approval',
    version: 1,
    what: 'approval credentials (contract-clients/approval-client.ts)',
  },
  // The requester:
  jobs: { name: 'jobs', version: 1, what: 'jobs with their machine snapshots (orchestrator/job-store.ts)' },
  jobIndex: {
    name: 'job-index',
    version: 1,
    what: 'listing indexes of the jobs, version under `~version` (orchestrator/job-index.ts)',
  },
  providerRecords: {
    name: 'provider-records',
    version: 1,
    what: "the requester's record of each provider (orchestrator/provider-records.ts)",
  },
  topics: { name: 'topics', version: 1, what: 'optional topic choices (orchestrator/capacity-news.ts)' },
  queues: { name: 'queues', version: 1, what: 'queues of jobs (orchestrator/queues/queue-book.ts)' },
  workflows: { name: 'workflows', version: 1, what: 'workflows and their tasks (workflows/runner.ts)' },
  workers: {
    name: 'workers',
    version: 1,
    what: 'registered worker descriptors by id (functions/worker-book.ts)',
  },
  actions: {
    name: 'actions',
    version: 1,
    what: 'actions by id with their jobs, the result cache (functions/action-book.ts)',
  },
  // The provider:
  offer: { name: 'offer', version: 1, what: 'the resources offered (resources/ledger-store.ts)' },
  ledger: { name: 'ledger', version: 1, what: 'resource ledger entries (resources/ledger-store.ts)' },
  bids: {
    name: 'provider-machines',
    version: 4,
    what: 'each bid with its machine snapshot, `v: 4`; `v: 2` and `v: 3` records are upgraded as read (provider/bid-store.ts)',
  },
  v01Bids: { name: 'provider-bids', version: 1, what: 'dms 0.1 bids, read once by provider/migrate-v01.ts' },
  v01Allocations: {
    name: 'allocations',
    version: 1,
    what: 'dms 0.1 allocations, read once by provider/migrate-v01.ts',
  },
  providerBooks: { name: 'provider-books', version: 1, what: "the provider's books (provider/books.ts)" },
  providerResults: {
    name: 'provider-results',
    version: 1,
    what: 'results kept until settlement (provider/kept-results.ts)',
  },
  keptArchives: {
    name: 'kept-archives',
    version: 1,
    what: 'output archives kept for requesters (provider/kept-archives.ts)',
  },
  providerMode: {
    name: 'provider-mode',
    version: 1,
    what: 'ready, paused or draining (provider/node-mode.ts)',
  },
  // The contract-db (contract-db/records.ts):
  cdbApproved: { name: 'cdb-approved', version: 1, what: 'approved entities' },
  cdbAccounts: { name: 'cdb-accounts', version: 1, what: 'accounts: balance and escrow' },
  cdbContracts: { name: 'cdb-contracts', version: 1, what: 'contracts and their documents' },
  cdbBooks: { name: 'cdb-books', version: 1, what: 'totals of the books: `credited` (conservation.ts)' },
  cdbDue: {
    name: 'cdb-due',
    version: 1,
    what: 'index of active contracts by `watchFrom` (contract-db/store/level.ts), for the expiry sweep',
  },
  cdbListing: {
    name: 'cdb-listing',
    version: 1,
    what: 'index of contracts by `activatedAt`, all and per state, and the count per state (contract-db/store/level.ts), for the operator listings',
  },
} as const satisfies Record<string, StoreTable>

/** A table's name on disk: only these can be opened (`Repo`, `sublevel`). */
export type StoreName = (typeof STORES)[keyof typeof STORES]['name']
