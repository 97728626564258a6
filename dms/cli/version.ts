/** `dms version`: the package version, the wire protocol versions it speaks, and Node's. */
import { print, printData } from './output.js'

export async function versionCommand(o: { json?: boolean }): Promise<void> {
  const [{ DMS_VERSION }, { ACTOR_PROTOCOL }, { BID_REQUEST_TOPIC }] = await Promise.all([
    import('../api/openapi.js'),
    import('../network/transport.js'),
    import('../protocol/handles.js'),
  ])
  const v = {
    version: DMS_VERSION,
    protocol: ACTOR_PROTOCOL,
    bidTopic: BID_REQUEST_TOPIC,
    node: process.version,
  }
  if (o.json) printData(v)
  else print(`dms ${v.version}\nprotocol ${v.protocol} (bid requests on ${v.bidTopic})\nnode ${v.node}`)
}
