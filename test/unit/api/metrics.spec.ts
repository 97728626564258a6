import assert from 'node:assert/strict'
import { renderPrometheus } from '../../../dms/api/metrics.js'

describe('Prometheus text rendering', () => {
  it('renders HELP, TYPE and labelled samples in the 0.0.4 text format', () => {
    const text = renderPrometheus([
      {
        name: 'dms_actor_rejections_total',
        help: 'refused frames',
        type: 'counter',
        samples: [
          { labels: { reason: 'bad_signature' }, value: 3 },
          { labels: { reason: 'expired' }, value: 1 },
        ],
      },
      { name: 'dms_jobs', help: 'jobs by state', type: 'gauge', samples: [] },
      { name: 'dms_peers_connected', help: 'peers', type: 'gauge', samples: [{ value: 2 }] },
    ])
    assert.equal(
      text,
      [
        '# HELP dms_actor_rejections_total refused frames',
        '# TYPE dms_actor_rejections_total counter',
        'dms_actor_rejections_total{reason="bad_signature"} 3',
        'dms_actor_rejections_total{reason="expired"} 1',
        '# HELP dms_jobs jobs by state',
        '# TYPE dms_jobs gauge',
        '# HELP dms_peers_connected peers',
        '# TYPE dms_peers_connected gauge',
        'dms_peers_connected 2',
        '',
      ].join('\n'),
    )
  })

  it('escapes label values and help text, and writes special floats', () => {
    const text = renderPrometheus([
      {
        name: 'm',
        help: 'a\\b\nc',
        type: 'gauge',
        samples: [{ labels: { a: 'x"y\\z\nw', b: 'ok' }, value: Infinity }, { value: NaN }, { value: 0.5 }],
      },
    ])
    assert.equal(
      text,
      '# HELP m a\\\\b\\nc\n# TYPE m gauge\nm{a="x\\"y\\\\z\\nw",b="ok"} +Inf\nm NaN\nm 0.5\n',
    )
  })

  it('refuses a metric name Prometheus would not parse', () => {
    assert.throws(
      () => renderPrometheus([{ name: 'dms-bad', help: '', type: 'gauge', samples: [] }]),
      /bad metric name/,
    )
  })
})
