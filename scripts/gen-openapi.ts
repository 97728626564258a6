/**
 * Writes specs/openapi.json, the OpenAPI document generated from the REST API's route schemas
 * (dms/api/openapi.ts). `npx tsx scripts/gen-openapi.ts [out]`; scripts/check-openapi.sh checks that
 * the committed file is current.
 */
import { writeFile } from 'node:fs/promises'
import { detachedPorts } from '../dms/api/null-ports.js'
import { buildApi } from '../dms/api/server.js'
import { silentLogger } from '../dms/log.js'

const out = process.argv[2] ?? 'specs/openapi.json'
// The routes are the same whatever is behind their ports: none here.
const { app, openapi } = buildApi(detachedPorts(), { log: silentLogger })
await app.ready()
await writeFile(out, `${JSON.stringify(openapi(), null, 2)}\n`)
await app.close()
console.log(`wrote ${out}`)
