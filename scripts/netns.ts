/**
 * Linux network namespaces standing in for separate hosts (root only): a bridge in its own
 * namespace as "the internet", public hosts on it, and hosts on a private LAN behind a NAT router
 * (iptables MASQUERADE, no inbound port). Nothing is added to the machine's own namespace: every
 * link, address, route and iptables rule lives in a namespace made here, named `dn<pid>-<name>`,
 * and `teardown` (or, after a crash, `removeStale` at the next start) deletes them.
 * The "internet" uses 7.77.0.0/24, an address range libp2p counts as public (AutoNAT, DCUtR and
 * the DHT judge reachability by it); no route leads out of these namespaces, so no traffic leaves.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** Namespaces of this process start with this; `removeStale` removes those of dead processes. */
export const PREFIX = 'dn'
const INET = '7.77.0'
const LAN = '10.77.1'

export interface NetnsHost {
  /** The host's name in the topology (e.g. `relay`, `provider`). */
  name: string
  /** Its namespace: run a process in it with `ip netns exec <ns> ...` (see `inNs`). */
  ns: string
  /** Its own address. */
  addr: string
  /** Behind the NAT (no inbound connection reaches it). */
  natted: boolean
}

export interface Netns {
  /** The address peers see for the NATed hosts (the router's public side). */
  natPublicAddr: string
  hosts: Record<string, NetnsHost>
  /** Deletes every namespace made (their links, addresses, routes and rules go with them). */
  teardown(): Promise<void>
}

async function ip(...args: string[]): Promise<void> {
  try {
    await run('ip', args)
  } catch (err) {
    throw new Error(`ip ${args.join(' ')}: ${(err as { stderr?: string }).stderr?.trim() ?? String(err)}`)
  }
}

async function inNsRun(ns: string, cmd: string, ...args: string[]): Promise<void> {
  await ip('netns', 'exec', ns, cmd, ...args)
}

/** The command line that runs `argv` inside namespace `ns`. */
export function inNs(ns: string, argv: string[]): { cmd: string; args: string[] } {
  return { cmd: 'ip', args: ['netns', 'exec', ns, ...argv] }
}

/** Why namespaces cannot be made here, or undefined when they can (root, `ip`, `iptables`). */
export async function netnsUnavailable(): Promise<string | undefined> {
  if (process.platform !== 'linux') return 'network namespaces need Linux'
  if (process.getuid?.() !== 0) return 'network namespaces need root'
  for (const [tool, flag] of [
    ['ip', '-V'],
    ['iptables', '--version'],
  ])
    try {
      await run(tool, [flag])
    } catch {
      return `${tool} is not installed`
    }
  const probe = `${PREFIX}${process.pid}-probe`
  try {
    await ip('netns', 'add', probe)
    await ip('netns', 'del', probe)
  } catch (err) {
    return `cannot create a network namespace: ${(err as Error).message}`
  }
  return undefined
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Deletes the namespaces (`dn<pid>-*`) left by processes that are gone (a crash, a SIGKILL). */
export async function removeStale(): Promise<string[]> {
  const { stdout } = await run('ip', ['netns', 'list'])
  const removed: string[] = []
  for (const line of stdout.split('\n')) {
    const name = line.split(' ')[0]
    const m = new RegExp(`^${PREFIX}(\\d+)-[a-z0-9]+$`).exec(name ?? '')
    if (m === null || alive(Number(m[1]))) continue
    await ip('netns', 'del', name).catch(() => undefined)
    removed.push(name)
  }
  return removed
}

/**
 * Builds the topology: `publicHosts` on the internet bridge, `nattedHosts` on a LAN behind a NAT
 * router (MASQUERADE, inbound connections dropped). Names: lowercase letters and digits, ≤ 6.
 * A failed build deletes what it made.
 */
export async function buildNetns(publicHosts: string[], nattedHosts: string[]): Promise<Netns> {
  await removeStale()
  const tag = `${PREFIX}${process.pid}`
  const made: string[] = []
  const ns = async (name: string) => {
    if (!/^[a-z0-9]{1,6}$/.test(name)) throw new Error(`netns host name ${name}: a-z0-9, at most 6`)
    const n = `${tag}-${name}`
    await ip('netns', 'add', n)
    made.push(n)
    await ip('-n', n, 'link', 'set', 'lo', 'up')
    return n
  }
  const teardown = async () => {
    for (const n of made.splice(0).reverse()) await ip('netns', 'del', n).catch(() => undefined)
  }
  try {
    const inet = await ns('inet')
    await ip('-n', inet, 'link', 'add', 'br0', 'type', 'bridge')
    await ip('-n', inet, 'link', 'set', 'br0', 'up')
    // A veth pair made inside `inet`, one end moved into the host: the machine's own namespace never sees it.
    const plug = async (hostNs: string, port: string, ifname: string, addr: string) => {
      await ip('-n', inet, 'link', 'add', port, 'type', 'veth', 'peer', 'name', ifname, 'netns', hostNs)
      await ip('-n', inet, 'link', 'set', port, 'master', 'br0')
      await ip('-n', inet, 'link', 'set', port, 'up')
      await ip('-n', hostNs, 'addr', 'add', `${addr}/24`, 'dev', ifname)
      await ip('-n', hostNs, 'link', 'set', ifname, 'up')
    }
    const hosts: Record<string, NetnsHost> = {}
    for (const [i, name] of publicHosts.entries()) {
      const n = await ns(name)
      const addr = `${INET}.${10 + i}`
      await plug(n, `p${i}`, 'eth0', addr)
      hosts[name] = { name, ns: n, addr, natted: false }
    }
    const natPublicAddr = `${INET}.254`
    if (nattedHosts.length > 0) {
      const router = await ns('nat')
      await plug(router, 'pnat', 'wan', natPublicAddr)
      await ip('-n', router, 'link', 'add', 'lan', 'type', 'bridge')
      await ip('-n', router, 'addr', 'add', `${LAN}.1/24`, 'dev', 'lan')
      await ip('-n', router, 'link', 'set', 'lan', 'up')
      await inNsRun(router, 'sysctl', '-qw', 'net.ipv4.ip_forward=1')
      const ipt = (...args: string[]) => inNsRun(router, 'iptables', ...args)
      await ipt('-t', 'nat', '-A', 'POSTROUTING', '-o', 'wan', '-j', 'MASQUERADE')
      // No inbound port: from the internet, only replies to connections the LAN opened get through.
      await ipt(
        '-A',
        'FORWARD',
        '-i',
        'wan',
        '-o',
        'lan',
        '-m',
        'conntrack',
        '--ctstate',
        'ESTABLISHED,RELATED',
        '-j',
        'ACCEPT',
      )
      await ipt('-A', 'FORWARD', '-i', 'wan', '-o', 'lan', '-j', 'DROP')
      for (const [i, name] of nattedHosts.entries()) {
        const n = await ns(name)
        const addr = `${LAN}.${10 + i}`
        const port = `l${i}`
        await ip('-n', router, 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', n)
        await ip('-n', router, 'link', 'set', port, 'master', 'lan')
        await ip('-n', router, 'link', 'set', port, 'up')
        await ip('-n', n, 'addr', 'add', `${addr}/24`, 'dev', 'eth0')
        await ip('-n', n, 'link', 'set', 'eth0', 'up')
        await ip('-n', n, 'route', 'add', 'default', 'via', `${LAN}.1`)
        hosts[name] = { name, ns: n, addr, natted: true }
      }
    }
    return { natPublicAddr, hosts, teardown }
  } catch (err) {
    await teardown()
    throw err
  }
}
