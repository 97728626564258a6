/**
 * `dms earnings`: the provider's books (specs/provider-books.md): paid on settlements, paid on its
 * own claims, refunded to requesters, outstanding, and per requester the paid, unpaid and claimed
 * jobs. From the running node's REST socket, else read from the data directory.
 */
import { join, resolve } from 'node:path'
import { systemClock } from '../../actors/clock.js'
import { ApiClient, ApiClientError, DaemonNotRunningError } from '../api/client.js'
import type { EarningsReply } from '../api/schemas.js'
import { silentLogger } from '../log.js'
import { ProviderBooks } from '../provider/books.js'
import { DataDirInUseError, openDb } from '../store/db.js'
import { existingNodeDb } from './node-data.js'
import { CliError, print, printData } from './output.js'
import { printTable } from './table.js'

export interface EarningsOptions {
  dataDir: string
  socket?: string
  json?: boolean
}

async function readBooks(o: EarningsOptions): Promise<EarningsReply> {
  const dataDir = resolve(o.dataDir)
  try {
    return await new ApiClient(o.socket ?? join(dataDir, 'dms.sock')).ok<EarningsReply>('GET', '/v1/earnings')
  } catch (err) {
    if (err instanceof ApiClientError) throw new CliError(err.message)
    if (!(err instanceof DaemonNotRunningError)) throw err
  }
  const path = existingNodeDb(dataDir)
  let db
  try {
    db = await openDb(path)
  } catch (err) {
    if (err instanceof DataDirInUseError) throw new CliError(err.message)
    throw err
  }
  try {
    const books = new ProviderBooks({
      db,
      clock: systemClock,
      log: silentLogger,
      contractDb: '',
      claim: () => Promise.reject(new Error('not running')),
    })
    return await books.summary()
  } finally {
    await db.close()
  }
}

export async function earningsCommand(o: EarningsOptions): Promise<void> {
  const b = await readBooks(o)
  if (o.json) return printData(b)
  print(`paid         ${b.paid}`)
  print(`claimed      ${b.claimed}`)
  print(`refunded     ${b.refunded}`)
  print(`outstanding  ${b.outstanding}`)
  print(
    `contracts    ${b.contracts.settled} settled, ${b.contracts.claimed} claimed, ${b.contracts.open} open`,
  )
  const requesters = Object.entries(b.requesters)
  if (requesters.length === 0) return
  print('')
  printTable(
    ['REQUESTER', 'PAID', 'UNPAID', 'CLAIMED'],
    requesters.map(([peer, r]) => [peer, r.paid, r.unpaid, r.claimed]),
  )
}
