/**
 * `dms earnings`: the provider's books (specs/provider-books.md): paid on settlements, paid on its
 * own claims, refunded to requesters, outstanding, and per requester the paid, unpaid and claimed
 * jobs. From the running node's REST socket, else read from the data directory.
 */
import { mkdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { Command } from 'commander'
import { systemClock } from '../../actors/clock.js'
import { ApiClient, ApiClientError, DaemonNotRunningError } from '../api/client.js'
import type { EarningsReply } from '../api/schemas.js'
import { silentLogger } from '../log.js'
import { ProviderBooks } from '../provider/books.js'
import { DataDirInUseError, openDb } from '../store/db.js'
import { CliError, print, printJson } from './output.js'

interface EarningsOptions {
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
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  let db
  try {
    db = await openDb(join(dataDir, 'db'))
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

export function registerEarningsCommand(program: Command, defaultDataDir: string): void {
  program
    .command('earnings')
    .description("this provider's books: paid, claimed, refunded and outstanding micro-tokens, per requester")
    .option('--data-dir <dir>', 'data directory of the provider node', defaultDataDir)
    .option('--socket <path>', "REST socket of the running node (default: '<data-dir>/dms.sock')")
    .option('--json', 'print JSON')
    .action(async (o: EarningsOptions) => {
      const b = await readBooks(o)
      if (o.json) return printJson(b)
      print(`paid         ${b.paid}`)
      print(`claimed      ${b.claimed}`)
      print(`refunded     ${b.refunded}`)
      print(`outstanding  ${b.outstanding}`)
      print(
        `contracts    ${b.contracts.settled} settled, ${b.contracts.claimed} claimed, ${b.contracts.open} open`,
      )
      for (const [peer, r] of Object.entries(b.requesters))
        print(`  ${peer}  paid ${r.paid}  unpaid ${r.unpaid}  claimed ${r.claimed}`)
    })
}
