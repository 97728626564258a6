/**
 * `-o table|wide|json|yaml` (issue 20): one output module for every command. The format is read
 * once per invocation; yaml is real YAML (read back with js-yaml, the parser mocha ships); `wide`
 * adds columns; every table has a header row.
 */
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { Command } from 'commander'
import { addOutputOptions, applyOutputOption, escapeUnsafe, printData } from '../../../dms/cli/output.js'
import { printRows } from '../../../dms/cli/table.js'
import { toYaml } from '../../../dms/cli/yaml.js'

const yaml = createRequire(import.meta.url)('js-yaml') as { load: (s: string) => unknown }

/** What `fn` writes on stdout. */
function stdoutOf(fn: () => void): string {
  const write = process.stdout.write.bind(process.stdout)
  let out = ''
  process.stdout.write = (s: string) => ((out += s), true)
  try {
    fn()
  } finally {
    process.stdout.write = write
  }
  return out
}

describe('CLI output formats (issue 20)', () => {
  afterEach(() => applyOutputOption({}))

  it('reads -o and --json: json and yaml set the machine-output flag, a bad or clashing format is refused', () => {
    const o1: { output?: string; json?: boolean } = { output: 'yaml' }
    assert.equal(applyOutputOption(o1), 'yaml')
    assert.equal(o1.json, true)
    const o2: { json?: boolean } = { json: true }
    assert.equal(applyOutputOption(o2), 'json')
    const o3: { output?: string; json?: boolean } = { output: 'wide' }
    assert.equal(applyOutputOption(o3), 'wide')
    assert.equal(o3.json, undefined, 'wide is a table')
    assert.equal(applyOutputOption({}), 'table')
    assert.throws(
      () => applyOutputOption({ output: 'xml' }),
      /-o\/--output: "xml" is not one of table, wide, json, yaml/,
    )
    assert.throws(
      () => applyOutputOption({ output: 'yaml', json: true }),
      /--json and -o yaml: give only one/,
    )
    assert.equal(applyOutputOption({ output: 'json', json: true }), 'json')
  })

  it('writes YAML that reads back as the same data, strings that look like other things included', () => {
    const data = {
      id: 'a1b2',
      look: [
        'true',
        'no',
        'null',
        '1.5',
        '0x10',
        '.5',
        '',
        ' lead',
        'trail ',
        'a: b',
        '#x',
        '- x',
        'multi\nline',
        'ünï',
        '~',
      ],
      n: 0,
      neg: -2.5,
      yes: true,
      none: null,
      skipped: undefined,
      empty: { list: [], map: {} },
      nested: [{ a: 1, b: [1, [2, 3]] }, [], 'x', { 'key with: colon': { deep: 'v' } }],
    }
    const back = yaml.load(toYaml(data))
    assert.deepEqual(back, JSON.parse(JSON.stringify(data)))
    assert.deepEqual(yaml.load(toYaml([])), [])
    assert.deepEqual(yaml.load(toYaml({})), {})
    assert.deepEqual(yaml.load(toYaml('true')), 'true')
    assert.match(toYaml({ state: 'completed', cpu: 0.5 }), /^state: completed\ncpu: 0\.5\n$/)
  })

  it('printData follows the chosen format', () => {
    applyOutputOption({ output: 'yaml' })
    assert.equal(
      stdoutOf(() => printData({ id: 'j1', count: 2 })),
      'id: j1\ncount: 2\n',
    )
    applyOutputOption({ json: true })
    assert.equal(
      stdoutOf(() => printData({ id: 'j1' })),
      '{\n  "id": "j1"\n}\n',
    )
  })

  it('tables have a header row; -o wide adds the wide columns', () => {
    const cols = [
      { header: 'ID', cell: (r: { id: string; p?: string }) => r.id },
      { header: 'PROVIDER', cell: (r: { id: string; p?: string }) => r.p, wide: true },
    ]
    const rows = [{ id: 'j1', p: '12D3KooWx' }, { id: 'job-2' }]
    assert.equal(
      stdoutOf(() => printRows(cols, rows)),
      'ID\nj1\njob-2\n',
    )
    applyOutputOption({ output: 'wide' })
    assert.equal(
      stdoutOf(() => printRows(cols, rows)),
      'ID     PROVIDER\nj1     12D3KooWx\njob-2  -\n',
    )
  })

  it('adds -o to every command that prints JSON, and applies it before the action', async () => {
    const program = new Command('dms').exitOverride()
    let seen: unknown
    program
      .command('list')
      .option('--json', 'print JSON')
      .action((o: { json?: boolean }) => void (seen = o.json))
    program.command('plain').action(() => undefined)
    addOutputOptions(program)
    const list = program.commands.find((c) => c.name() === 'list')!
    assert.ok(list.options.some((o) => o.long === '--output' && o.short === '-o'))
    assert.ok(!program.commands.find((c) => c.name() === 'plain')!.options.some((o) => o.long === '--output'))
    await program.parseAsync(['node', 'dms', 'list', '-o', 'yaml'])
    assert.equal(seen, true, 'yaml is machine output')
  })

  it('writes C1 controls and bidi overrides from peers as escapes that JSON and YAML read back unchanged', () => {
    const data = { name: 'evil\u009b2J\u202egnp.exe', ['k\u0085']: ['\u2066x\u2069'] }
    applyOutputOption({ output: 'json' })
    const json = stdoutOf(() => printData(data))
    applyOutputOption({ output: 'yaml' })
    const yml = stdoutOf(() => printData(data))
    for (const text of [json, yml]) assert.doesNotMatch(text, /[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/)
    assert.deepEqual(JSON.parse(json), data)
    assert.deepEqual(yaml.load(yml), data)
    assert.equal(escapeUnsafe('plain é ✓'), 'plain é ✓', 'other text unchanged')
  })
})

describe('ids only and no headers (issue 35)', () => {
  afterEach(() => applyOutputOption({}))
  type Row = { id: string; state: string }
  const rows: Row[] = [
    { id: 'a1', state: 'running' },
    { id: 'b2', state: 'completed' },
  ]
  const table = () =>
    stdoutOf(() =>
      printRows<Row>(
        [
          { header: 'STATE', cell: (r) => r.state },
          { header: 'ID', cell: (r) => r.id },
        ],
        rows,
      ),
    )

  it('-q and -o name print the ID column only, one a line, no header', () => {
    applyOutputOption({ quiet: true })
    assert.equal(table(), 'a1\nb2\n')
    applyOutputOption({ output: 'name' })
    assert.equal(table(), 'a1\nb2\n')
  })

  it('--no-headers drops the header row and keeps the columns', () => {
    applyOutputOption({ headers: false })
    assert.equal(table(), 'running    a1\ncompleted  b2\n')
    applyOutputOption({})
    assert.match(table(), /^STATE {6}ID\n/)
  })

  it('-q with another format is refused, naming both', () => {
    assert.throws(() => applyOutputOption({ quiet: true, output: 'json' }), /-q and -o "json"/)
    assert.throws(() => applyOutputOption({ quiet: true, json: true }), /-q and --json/)
  })
})
