/**
 * Logs (issue 20): readable lines on a terminal, JSON lines otherwise; colours only on a terminal
 * and never with NO_COLOR. The terminal is a flag passed in (no pty needed).
 */
import assert from 'node:assert/strict'
import { pino } from 'pino'
import { logStyle } from '../../../dms/log.js'
import { prettyDestination, prettyLine } from '../../../dms/log-pretty.js'

const ESC = '\x1b['

describe('log style and pretty lines (issue 20)', () => {
  it('is readable on a terminal and JSON otherwise; DMS_LOG_FORMAT decides when set', () => {
    assert.deepEqual(logStyle(true, {}), { pretty: true, colour: true })
    assert.deepEqual(logStyle(false, {}), { pretty: false, colour: false })
    assert.deepEqual(logStyle(undefined, {}), { pretty: false, colour: false })
    assert.deepEqual(logStyle(true, { DMS_LOG_FORMAT: 'json' }), { pretty: false, colour: false })
    assert.deepEqual(
      logStyle(false, { DMS_LOG_FORMAT: 'pretty' }),
      { pretty: true, colour: false },
      'no colour into a file',
    )
  })

  it('refuses a DMS_LOG_FORMAT it does not know, naming it; empty counts as unset', () => {
    assert.throws(() => logStyle(true, { DMS_LOG_FORMAT: 'yaml' }), {
      name: 'LogFormatError',
      code: 'INVALID_LOG_FORMAT',
      message: 'DMS_LOG_FORMAT: "yaml" is not json or pretty',
    })
    assert.deepEqual(logStyle(false, { DMS_LOG_FORMAT: '' }), { pretty: false, colour: false })
  })

  it('never colours with NO_COLOR set (an empty NO_COLOR does not count)', () => {
    assert.deepEqual(logStyle(true, { NO_COLOR: '1' }), { pretty: true, colour: false })
    assert.deepEqual(logStyle(true, { NO_COLOR: '' }), { pretty: true, colour: true })
  })

  it('writes a pino record as time, level, component, message and fields; colour only when asked', () => {
    const rec = {
      level: 40,
      time: Date.UTC(2026, 10, 22, 12, 0, 1, 234),
      name: 'dms',
      c: 'provider:bids',
      msg: 'bid refused',
      jobId: 'j1',
      n: 2,
      why: 'no room left',
    }
    const plain = prettyLine(JSON.stringify(rec), false)
    assert.equal(plain, '12:00:01.234 WARN  provider:bids bid refused jobId=j1 n=2 why="no room left"\n')
    assert.ok(!plain.includes(ESC))
    const coloured = prettyLine(JSON.stringify(rec), true)
    assert.ok(coloured.includes(`${ESC}33mWARN `), 'warn in yellow')
    assert.equal(
      coloured
        .split(ESC)
        .map((part, i) => (i === 0 ? part : part.replace(/^\d+m/, '')))
        .join(''),
      plain,
      'the same text, coloured',
    )
  })

  it('escapes control characters that came from elsewhere, and keeps a line that is not JSON', () => {
    const line = prettyLine(JSON.stringify({ level: 30, time: 0, msg: 'name \x1b[2J', peer: 'x\ny' }), false)
    assert.equal(line, '00:00:00.000 INFO  name \\u001b[2J peer="x\\ny"\n')
    assert.equal(prettyLine('not json', false), 'not json\n')
  })

  it('is a pino destination: a real logger writes readable lines through it', () => {
    let out = ''
    const log = pino({ base: undefined }, prettyDestination({ write: (s: string) => (out += s) }, false))
    log.child({ c: 'api' }).info({ port: 8080 }, 'listening')
    assert.match(out, /^\d\d:\d\d:\d\d\.\d{3} INFO {2}api listening port=8080\n$/)
  })
})
