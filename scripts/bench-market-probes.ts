/**
 * Probes of scripts/bench-market.ts (bench instrumentation only): counting the envelopes a node
 * sends, and driving a provider host process (scripts/bench-market-host.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { ActorSystem } from '../actors/system.js'

/** Counts what every node's actor system sends, by behaviour (bench instrumentation only). */
export class Sends {
  readonly byBehaviour: Record<string, number> = {}
  watch(system: ActorSystem): void {
    const count = (b: string) => (this.byBehaviour[b] = (this.byBehaviour[b] ?? 0) + 1)
    const send = system.sendEnvelope.bind(system)
    system.sendEnvelope = (actor, to, behaviour, payload, opts) => {
      count(behaviour)
      return send(actor, to, behaviour, payload, opts)
    }
    const publish = system.publish.bind(system)
    system.publish = (actor, topic, behaviour, payload, ttlMs) => {
      count(`${behaviour} (gossip)`)
      return publish(actor, topic, behaviour, payload, ttlMs)
    }
  }
  get(b: string): number {
    return this.byBehaviour[b] ?? 0
  }
}

/** A provider host process (scripts/bench-market-host.ts), answering one JSON line per command. */
export class Host {
  private readonly lines: string[] = []
  private wake?: () => void
  readonly child: ChildProcess

  constructor(args: string[]) {
    this.child = spawn(process.execPath, ['--import', 'tsx', '--import', './actors/polyfill.ts', ...args], {
      cwd: join(import.meta.dirname, '..'),
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    createInterface({ input: this.child.stdout! }).on('line', (l) => {
      this.lines.push(l)
      this.wake?.()
    })
  }

  async next<T>(): Promise<T> {
    while (this.lines.length === 0) await new Promise<void>((r) => (this.wake = r))
    return JSON.parse(this.lines.shift()!) as T
  }

  ask<T>(command: string): Promise<T> {
    this.child.stdin!.write(`${command}\n`)
    return this.next<T>()
  }
}
