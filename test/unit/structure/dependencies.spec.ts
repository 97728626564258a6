/**
 * The shape of the code, checked: no import cycles among the sources (actors/, proto/, dms/; type
 * imports count too: two files that import each other cannot be read or moved apart), none among
 * their folders either, and the
 * directions `cli, api -> dms/* -> actors -> proto` (dms/web/, shared by the REST API and the
 * contract-db's dashboard, imports only actors/). Tests and scripts are leaves: they may
 * import anything, and no source imports them.
 *
 * A small scanner of relative imports, not a lint plugin: eslint-plugin-import's no-cycle is slow
 * on this tree, and these rules are about folders, which it does not know.
 *
 * KNOWN lists today's violations, each with the change that removes it; the test fails on any
 * violation not listed, and on a listed one that is gone (so the list only shrinks).
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'

const ROOT = join(import.meta.dirname, '..', '..', '..')
const SOURCES = ['actors', 'proto', 'dms']

/** Today's violations: "from -> to", and why each is still here. Phase B empties this list. */
const KNOWN: Record<string, string> = {}

/**
 * The composition roots: they build every part, faces included (dms/node-adapters.ts holds the
 * node's adapters from its parts to the REST API's ports, dms/node-metrics.ts its metrics feeds,
 * dms/parts/ the node's part factories).
 */
const ROOT_FILES = new Set([
  'dms/node.ts',
  'dms/node-adapters.ts',
  'dms/node-metrics.ts',
  'dms/contract-db/node.ts',
])
const ROOTS = { has: (f: string) => ROOT_FILES.has(f) || f.startsWith('dms/parts/') }

interface Edge {
  from: string
  to: string
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`
    if (e.isDirectory()) return sourceFiles(path)
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : []
  })
}

/** `import ... from`, `export ... from`, `import '...'` and `import('...')` of relative paths. */
const IMPORT =
  /(?:^|[\n;])\s*(?:import|export)\s[^'"]*?['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g

function importsOf(file: string): string[] {
  // Comments may quote code; strings here never hold a comment opener that matters.
  const text = readFileSync(join(ROOT, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '')
  return [...text.matchAll(IMPORT)].map((m) =>
    normalize(join(dirname(file), m[1] ?? m[2]))
      .replace(/\\/g, '/')
      .replace(/\.js$/, '.ts'),
  )
}

/** The top folder of a file as the rules see it: `actors`, `proto`, `dms/<area>` or `dms/<file>`. */
function areaOf(file: string): string {
  const parts = file.split('/')
  if (parts[0] !== 'dms') return parts[0]
  return parts.length > 2 ? `dms/${parts[1]}` : file
}

/**
 * What the REST API (dms/api/) may import beyond itself, actors/ and the schema helpers: shapes
 * (records, messages, requests), never a part. The parts reach it through its ports, adapted in
 * the composition root.
 */
const API_SHAPES = new Set([
  'dms/schema.ts',
  'dms/contracts/model.ts', // receipts and settlements in a job, types
  'dms/orchestrator/job-record.ts',
  'dms/orchestrator/job-spec.ts', // the job spec's schema: the body of POST /v1/jobs
  'dms/orchestrator/job-spec-posted.ts', // a stored spec in that form (GET /v1/jobs/:id)
  'dms/workflows/document.ts', // the workflow document's schema: the body of POST /v1/workflows
  'dms/protocol/messages.ts',
  'dms/resources/onboard-request.ts',
  'dms/resources/onboarding.ts', // ResourcesView, a type
  'dms/workflows/record.ts',
  'dms/functions/worker.ts', // the worker descriptor's schema: the body of POST /v1/workers
  'dms/functions/action.ts', // the action batch's schema: the body of POST /v1/actions
  'dms/functions/views.ts', // the functions' records and views, types
])

/** Why an import breaks a direction rule, or undefined. */
function directionProblem({ from, to }: Edge): string | undefined {
  const a = areaOf(from)
  const b = areaOf(to)
  if (!SOURCES.includes(to.split('/')[0])) return 'a source imports a test or a script'
  if (a === 'proto' && b !== 'proto') return 'proto/ imports nothing of ours'
  if (a === 'actors' && b !== 'actors' && b !== 'proto') return 'actors/ imports only actors/ and proto/'
  if (a === 'dms/orchestrator' && (b === 'dms/provider' || b === 'dms/executor'))
    return 'the requester (dms/orchestrator) imports nothing of the provider or the executor'
  if (b === 'dms/cli' && a !== 'dms/cli') return 'nothing imports the CLI'
  if (b === 'dms/api' && a !== 'dms/api' && a !== 'dms/cli' && !ROOTS.has(from))
    return 'only the CLI and the composition root import the REST API'
  if (a === 'dms/web' && b !== 'dms/web' && b !== 'actors')
    return "dms/web/ (what the node's and the contract-db's web faces share) imports only actors/"
  if (a === 'dms/executor' && b !== 'dms/executor' && b !== 'dms/workload' && b !== 'actors')
    return 'the engines (dms/executor/) import only dms/workload/ and actors/: what runs, nothing of the market'
  if (a === 'dms/workload' && b !== 'dms/workload' && b !== 'actors')
    return 'dms/workload/ (what runs, below protocol/ and executor/) imports only actors/'
  if (a === 'dms/pricing' && b !== 'dms/pricing' && b !== 'actors')
    return 'dms/pricing/ (what a run costs, for every party) imports only actors/'
  if (a === 'dms/metrics' && b !== 'dms/metrics' && b !== 'actors')
    return "dms/metrics/ (what every role's Prometheus metrics share) imports only actors/"
  if (
    a === 'dms/api' &&
    b !== 'dms/api' &&
    b !== 'actors' &&
    b !== 'dms/web' &&
    b !== 'dms/metrics' &&
    !API_SHAPES.has(to)
  )
    return 'the REST API reaches the node only through its ports (dms/api/ports.ts)'
  if (ROOTS.has(to) && !ROOTS.has(from) && a !== 'dms/cli')
    return 'a part never takes a whole node (its composition root): pass it small ports'
  return undefined
}

/** The strongly connected components with more than one file (Tarjan), each sorted. */
function cycles(files: string[], edges: Edge[]): string[][] {
  const next = new Map<string, string[]>()
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to])
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (v: string): void => {
    index.set(v, counter)
    low.set(v, counter++)
    stack.push(v)
    onStack.add(v)
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const scc: string[] = []
    for (let w = stack.pop(); ; w = stack.pop()) {
      onStack.delete(w!)
      scc.push(w!)
      if (w === v) break
    }
    if (scc.length > 1 || (next.get(v) ?? []).includes(v)) found.push(scc.sort())
  }
  for (const f of files) if (!index.has(f)) visit(f)
  return found
}

describe('the dependency structure (imports among actors/, proto/, dms/)', () => {
  const files = SOURCES.flatMap(sourceFiles)
  const edges: Edge[] = files.flatMap((from) => importsOf(from).map((to) => ({ from, to })))
  const key = (e: Edge) => `${e.from} -> ${e.to}`
  const unlisted = edges.filter((e) => KNOWN[key(e)] === undefined)

  it('the scanner sees every source and resolves every relative import to one', () => {
    assert.ok(files.length > 100, `${files.length} source files found`)
    assert.ok(edges.length > 300, `${edges.length} imports found`)
    const known = new Set(files)
    const dangling = edges.filter((e) => !known.has(e.to) && SOURCES.includes(e.to.split('/')[0]))
    assert.deepEqual(dangling.map(key), [])
  })

  it('has no import cycle (beyond the listed edges)', () => {
    const found = cycles(files, unlisted)
    assert.deepEqual(found, [], `import cycles:\n${found.map((c) => `  ${c.join(' <-> ')}`).join('\n')}`)
  })

  it('has no cycle of folders (each dms/ folder, and each file at the top of dms/, one node)', () => {
    // A knot of folders hides behind acyclic files: a -> b in one file, b -> a in another.
    const areas = [...new Set(files.map(areaOf))]
    const between = new Map<string, Edge>()
    for (const e of unlisted) {
      const from = areaOf(e.from)
      const to = areaOf(e.to)
      if (from !== to) between.set(`${from} -> ${to}`, { from, to })
    }
    const found = cycles(areas, [...between.values()])
    // Name one import per tie, so the reader knows where to cut.
    const ties = found.map((c) =>
      unlisted
        .filter(
          (e) => c.includes(areaOf(e.from)) && c.includes(areaOf(e.to)) && areaOf(e.from) !== areaOf(e.to),
        )
        .map(key)
        .join('\n    '),
    )
    assert.deepEqual(
      found,
      [],
      `folder cycles:\n${found.map((c, i) => `  ${c.join(' <-> ')}\n    ${ties[i]}`).join('\n')}`,
    )
  })

  it('imports point one way: cli, api -> dms/* -> actors -> proto', () => {
    const bad = unlisted.flatMap((e) => {
      const why = directionProblem(e)
      return why === undefined ? [] : [`${key(e)}: ${why}`]
    })
    assert.deepEqual(bad, [])
  })

  it('every listed violation still exists (remove an entry once it is fixed)', () => {
    const present = new Set(edges.map(key))
    assert.deepEqual(
      Object.keys(KNOWN).filter((k) => !present.has(k)),
      [],
    )
    // And each is a violation indeed, or it does not belong on the list.
    for (const k of Object.keys(KNOWN)) {
      const [from, to] = k.split(' -> ')
      const inCycle = cycles(files, edges).some((c) => c.includes(from) && c.includes(to))
      assert.ok(inCycle || directionProblem({ from, to }) !== undefined, `${k} breaks no rule`)
    }
  })

  it('the rules catch what they are for', () => {
    // A self-check of the checker on made-up imports, so a broken rule does not pass silently.
    const cases: Array<[string, string]> = [
      ['proto/dms.ts', 'actors/codec.ts'],
      ['actors/system.ts', 'dms/protocol/handles.ts'],
      ['dms/orchestrator/orchestrator.ts', 'dms/provider/allocation.ts'],
      ['dms/orchestrator/data-plane.ts', 'dms/executor/outputs.ts'],
      ['dms/executor/common/collect-outputs.ts', 'dms/blobs/store.ts'],
      ['dms/executor/skipped.ts', 'dms/contracts/model.ts'],
      ['dms/provider/provider.ts', 'dms/api/server.ts'],
      ['dms/blobs/service.ts', 'dms/cli/main.ts'],
      ['dms/provider/provider.ts', 'dms/node.ts'],
      ['dms/node.ts', 'test/helpers/network.ts'],
      ['dms/api/job-routes.ts', 'dms/orchestrator/orchestrator.ts'],
      ['dms/api/node-routes.ts', 'dms/network/transport.ts'],
      ['dms/workload/workload.ts', 'dms/protocol/bounds.ts'],
    ]
    for (const [from, to] of cases) assert.ok(directionProblem({ from, to }), `${from} -> ${to} passed`)
    assert.equal(directionProblem({ from: 'dms/node.ts', to: 'dms/api/server.ts' }), undefined)
    assert.equal(directionProblem({ from: 'dms/cli/run.ts', to: 'dms/node.ts' }), undefined)
    const ab = [
      { from: 'a', to: 'b' },
      { from: 'b', to: 'c' },
      { from: 'c', to: 'a' },
    ]
    assert.deepEqual(cycles(['a', 'b', 'c'], ab), [['a', 'b', 'c']])
    assert.deepEqual(cycles(['a', 'b', 'c'], ab.slice(0, 2)), [])
  })
})
