/**
 * Writes specs/openapi.json, the OpenAPI document generated from the REST API's route schemas
 * (dms/api/openapi.ts). `npx tsx scripts/gen-openapi.ts [out]`; scripts/check-openapi.sh checks that
 * the committed file is current.
 */
import { writeFile } from 'node:fs/promises'
import { buildApi } from '../dms/api/server.js'
import { silentLogger } from '../dms/log.js'
import type { DmsNode } from '../dms/node.js'

const out = process.argv[2] ?? 'specs/openapi.json'
// Routes are registered without touching the node (handlers read it per request).
const { app, openapi } = buildApi({ node: {} as DmsNode, log: silentLogger })
await app.ready()
await writeFile(out, `${JSON.stringify(openapi(), null, 2)}\n`)
await app.close()
console.log(`wrote ${out}`)
