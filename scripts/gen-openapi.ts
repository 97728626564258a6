/**
 * Writes specs/openapi.json, the OpenAPI document generated from the REST API's route schemas
 * (dms/api/openapi.ts), and specs/workflow.schema.json, the workflow document's JSON Schema. `npx tsx scripts/gen-openapi.ts [out]`; scripts/check-openapi.sh checks that
 * the committed file is current.
 */
import { writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { detachedPorts } from '../dms/api/null-ports.js'
import { buildApi } from '../dms/api/server.js'
import { silentLogger } from '../dms/log.js'
import { workflowSchema } from '../dms/workflows/document.js'

const out = process.argv[2] ?? 'specs/openapi.json'
// The routes are the same whatever is behind their ports: none here.
const { app, openapi } = buildApi(detachedPorts(), { log: silentLogger })
await app.ready()
await writeFile(out, `${JSON.stringify(openapi(), null, 2)}\n`)
await app.close()
console.log(`wrote ${out}`)
// The workflow document's JSON Schema (specs/workflow.md), beside the OpenAPI document.
const schemaOut = join(dirname(out), 'workflow.schema.json')
await writeFile(schemaOut, `${JSON.stringify(workflowSchema, null, 2)}\n`)
console.log(`wrote ${schemaOut}`)
