import { join } from 'node:path'
import type { Logger } from 'pino'
import { systemClock, type Clock } from '../../actors/clock.js'
import type { KeyPair } from '../../actors/identity.js'
import type { ActorSystem } from '../../actors/system.js'
import type { Host } from '../network/host.js'
import type { Libp2pTransport } from '../network/transport.js'
import { startPeerBase } from '../peer-base.js'
import type { Db } from '../store/db.js'
import type { NetworkConfig } from '../config.js'
import { envPassphrase, type PassphraseSource } from '../keys.js'
import { child, silentLogger } from '../log.js'
import { OperatorApi } from './operator-api.js'
import { ContractDbService } from './service.js'

/** Configuration of a contract-db process (`dms contract-db run`). Spec: specs/config.md. */
export interface ContractDbConfig {
  /** Holds `node.key`, `db/` and the operator socket. */
  dataDir: string
  /** libp2p listen multiaddrs. @default ['/ip4/127.0.0.1/tcp/0'] */
  listen?: string[]
  /** Peers to dial at start (multiaddrs ending in /p2p/<id>). @default [] */
  bootstrap?: string[]
  /** One-host network settings (tests, demo). @default false */
  oneHost?: boolean
  /** Discovery, connection limits, gossipsub overrides, frame and mailbox limits (as for a node). */
  network?: NetworkConfig
  /** The operator's REST socket (mode 0600); false disables it. @default '<dataDir>/contract-db.sock' */
  socket?: string | false
  /** Lifetime of the approval credentials it issues (specs/contract-db.md). @default 600000 */
  approvalTtlMs?: number
}

export const CONTRACT_DB_SOCKET = 'contract-db.sock'

/**
 * The contract-db as its own peer: its own key, level database and libp2p host, the verifier
 * service on inbox `contract-db`, and the operator API on a local socket. `dms contract-db run`
 * runs one in its own process; in-process tests embed one the same way.
 */
export class ContractDbNode {
  key!: KeyPair
  db!: Db
  host!: Host
  transport!: Libp2pTransport
  system!: ActorSystem
  service!: ContractDbService
  api?: OperatorApi
  private readonly stops: Array<() => Promise<void> | void> = []
  private status: 'stopped' | 'starting' | 'started' = 'stopped'
  readonly clock: Clock
  readonly log: Logger

  private readonly passphrase: PassphraseSource

  constructor(
    readonly config: ContractDbConfig,
    components: { clock?: Clock; log?: Logger; passphrase?: PassphraseSource } = {},
  ) {
    this.clock = components.clock ?? systemClock
    this.log = components.log ?? silentLogger
    this.passphrase = components.passphrase ?? envPassphrase()
  }

  get peerId(): string {
    return this.transport.peerId
  }

  addrs(): string[] {
    return this.transport.addrs().map((a) => (a.includes('/p2p/') ? a : `${a}/p2p/${this.peerId}`))
  }

  get socketPath(): string | undefined {
    return this.api?.socketPath
  }

  async start(): Promise<void> {
    if (this.status !== 'stopped') return
    this.status = 'starting'
    try {
      await this.startParts()
      this.status = 'started'
    } catch (err) {
      await this.stop()
      throw err
    }
  }

  private async startParts(): Promise<void> {
    const cfg = this.config
    const { clock, log } = this
    // The same start as a node's: the database lock before the passphrase, then key, host, actors.
    const base = await startPeerBase(cfg, { clock, log, passphrase: this.passphrase }, this.stops)
    ;({ db: this.db, key: this.key, host: this.host, transport: this.transport, system: this.system } = base)
    this.service = new ContractDbService(
      {
        system: this.system,
        key: this.key,
        db: this.db,
        clock,
        log: child(log, 'dms:contract-db'),
      },
      { approvalTtlMs: cfg.approvalTtlMs },
    )
    this.service.start()
    this.stops.push(() => this.service.stop())
    if (cfg.socket !== false) {
      this.api = new OperatorApi(
        { node: this, log: child(log, 'dms:contract-db:api') },
        { socketPath: cfg.socket ?? join(cfg.dataDir, CONTRACT_DB_SOCKET) },
      )
      await this.api.start()
      this.stops.push(() => this.api?.stop())
    }
  }

  async stop(): Promise<void> {
    while (this.stops.length > 0) {
      const stop = this.stops.pop() as () => Promise<void> | void
      try {
        await stop()
      } catch (err) {
        this.log.warn({ err }, 'error while stopping')
      }
    }
    this.status = 'stopped'
  }
}
