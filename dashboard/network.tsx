/** This node's peers (roles, connection, latency, gossip standing) and the gossip topics' peers. */
import { api } from './api.js'
import { usePainted } from './first-paint.js'
import { useLive } from './live.js'

interface Peer {
  peerId: string
  addrs: string[]
  direction: string
  roles?: string[]
  connection?: string
  latencyMs?: number
  bidTopic: boolean
  gossipScore?: number
  graylisted?: boolean
}
interface Info {
  peerId: string
  addrs: string[]
  roles: { requester: boolean; provider: boolean }
  topics?: { subscribed: string[]; known: Array<{ topic: string; peers: number }> }
}

export function NetworkPage() {
  const { data, error } = useLive(
    () => Promise.all([api<{ peers: Peer[] }>('GET', '/v1/peers'), api<Info>('GET', '/v1/info')]),
    ['peer'],
  )
  usePainted(data !== undefined || error !== undefined)
  if (data === undefined) return <p class={error ? 'error' : ''}>{error ?? 'Loading…'}</p>
  const [{ peers }, info] = data
  // Every topic this node subscribes to (its peers may not: /dms/capacity/1 is the requester's),
  // and every topic a peer does.
  const live = new Map((info.topics?.known ?? []).map((t) => [t.topic, t.peers]))
  const subscribed = new Set(info.topics?.subscribed ?? [])
  const topics = [...new Set([...subscribed, ...live.keys()])].sort()
  return (
    <article id="network">
      <h1>Network</h1>
      <p class="mono">
        {info.peerId} ·{' '}
        {Object.entries(info.roles)
          .filter(([, on]) => on)
          .map(([r]) => r)
          .join(', ') || 'no role'}
      </p>
      <section>
        <h2>Peers ({peers.length})</h2>
        <div class="scroll">
          <table id="peers">
            <thead>
              <tr>
                <th>Peer</th>
                <th>Roles</th>
                <th>Connection</th>
                <th>Latency</th>
                <th>Direction</th>
                <th>Bid topic</th>
                <th>Gossip score</th>
              </tr>
            </thead>
            <tbody>
              {peers.map((p) => (
                <tr data-peer={p.peerId}>
                  <td class="mono" title={p.addrs.join('\n')}>
                    …{p.peerId.slice(-12)}
                  </td>
                  <td>{p.roles === undefined ? '?' : p.roles.join(', ') || '-'}</td>
                  <td>{p.connection ?? 'direct'}</td>
                  <td>{p.latencyMs === undefined ? '-' : `${Math.round(p.latencyMs)} ms`}</td>
                  <td>{p.direction}</td>
                  <td>{p.bidTopic ? 'yes' : ''}</td>
                  <td>
                    {Math.round(p.gossipScore ?? 0)}
                    {p.graylisted === true ? ' (graylisted)' : ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section id="topics">
        <h2>Gossip topics</h2>
        <table>
          <thead>
            <tr>
              <th>Topic</th>
              <th>Live subscribers</th>
              <th>Subscribed here</th>
            </tr>
          </thead>
          <tbody>
            {topics.map((t) => (
              <tr data-topic={t} data-subscribed={subscribed.has(t)}>
                <td class="mono">{t}</td>
                <td>{live.get(t) ?? 0}</td>
                <td>{subscribed.has(t) ? 'yes' : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </article>
  )
}
