/**
 * Fresh empty books on one throwaway cluster (postgres.ts): a cluster costs seconds to start and a
 * database about two under load, a schema a few milliseconds. So a spec file starts one cluster
 * and gives each test its own schema, named in the URL's `search_path` (every connection of the
 * store opens in it).
 */
import pg from 'pg'
import type { TestPostgres } from './postgres.js'

export interface TestDatabase {
  /** The URL whose connections use this test's schema (with the cluster's password). */
  url: string
  drop(): Promise<void>
}

let seq = 0

async function admin(cluster: TestPostgres, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: cluster.url })
  await c.connect()
  try {
    await c.query(sql)
  } finally {
    await c.end()
  }
}

/** A new empty schema on `cluster`; `drop` removes it and all it holds. */
export async function freshDatabase(cluster: TestPostgres): Promise<TestDatabase> {
  const name = `t${process.pid}_${++seq}`
  await admin(cluster, `create schema ${name}`)
  const url = new URL(cluster.url)
  url.searchParams.set('options', `-c search_path=${name}`)
  return { url: url.toString(), drop: () => admin(cluster, `drop schema if exists ${name} cascade`) }
}
