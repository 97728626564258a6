/**
 * The contract-db's tables in PostgreSQL (specs/contract-db.md, "PostgreSQL"): one migration per
 * schema version, applied in order at `open()` and recorded in `cdb_schema`. A migration is never
 * edited once released: a change of the tables is a new entry at the end.
 *
 * The money invariants SQL can hold row by row are constraints: every amount a bigint between 0
 * and 2^53 − 1 (a JavaScript safe integer, never a float), and a closed contract's settlement
 * splits exactly its escrow. What spans rows (an account's escrow equals its active contracts',
 * the credited total equals balances plus escrow) is checked by the conservation check.
 */

/** 2^53 − 1: the largest amount (`isAmount`, dms/contracts/money.ts). */
const MAX = '9007199254740991'
const amount = (col: string) => `${col} bigint not null check (${col} between 0 and ${MAX})`

/** The schema versions, each one's statements; version n is `MIGRATIONS[n - 1]`. */
export const MIGRATIONS: readonly (readonly string[])[] = [
  [
    `create table cdb_accounts (
      peer text primary key check (length(peer) between 1 and 256),
      ${amount('balance')},
      ${amount('escrow')}
    )`,
    `create table cdb_contracts (
      id text primary key check (length(id) between 1 and 256),
      state text not null check (state in ('active', 'settled', 'terminated', 'claimed', 'expired')),
      requester text not null,
      provider text not null,
      ${amount('escrow')},
      paid bigint check (paid between 0 and ${MAX}),
      refunded bigint check (refunded between 0 and ${MAX}),
      watch_from bigint not null,
      activated_at bigint not null,
      record jsonb not null,
      check ((paid is null) = (refunded is null)),
      check (paid is null or paid + refunded = escrow)
    )`,
    // The expiry sweep (dueBy), the operator's listings by state and by party.
    `create index cdb_contracts_due on cdb_contracts (watch_from) where state = 'active'`,
    `create index cdb_contracts_state on cdb_contracts (state, activated_at desc, id)`,
    `create index cdb_contracts_requester on cdb_contracts (requester, state)`,
    `create index cdb_contracts_provider on cdb_contracts (provider, state)`,
    `create table cdb_approvals (
      peer text primary key check (length(peer) between 1 and 256),
      record jsonb not null
    )`,
    `create table cdb_books (
      key text primary key,
      value jsonb not null,
      check (key <> 'credited' or (value->>'credited')::numeric between 0 and ${MAX})
    )`,
  ],
  [
    // The operator's pages (page.ts): newest first by (activated_at, id), all or of one state.
    // Ids in byte order ("C"), as level sorts its keys, so both backends page alike.
    `create index cdb_contracts_listing on cdb_contracts (activated_at, id collate "C")`,
    `create index cdb_contracts_state_listing on cdb_contracts (state, activated_at, id collate "C")`,
    `drop index cdb_contracts_state`,
  ],
]

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length

/** The table that says which versions were applied, and when. */
export const SCHEMA_TABLE = `create table if not exists cdb_schema (
  version integer primary key,
  applied_at timestamptz not null default now()
)`

/** Held while a schema is created or migrated, so that instances starting at once take turns. */
export const SCHEMA_LOCK = 0x646d_7363 // 'dmsc'
