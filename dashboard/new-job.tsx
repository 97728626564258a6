/**
 * Post a job from a form. The node checks the spec exactly as for `POST /v1/jobs` (it is that
 * route); a refused field is shown next to its input, by the field the API names.
 */
import { useState } from 'preact/hooks'
import { api, ApiProblem } from './api.js'
import { usePainted } from './first-paint.js'

interface Field {
  key: string
  label: string
  /** The API's field names this input answers for (`resources.cpu`, `command.0`…). */
  api: string
  type?: 'text' | 'number' | 'textarea'
  value: string
  hint?: string
  attrs?: Record<string, string | number | boolean>
}

const FIELDS: Field[] = [
  { key: 'name', label: 'Name', api: 'name', value: '', attrs: { maxLength: 128 } },
  {
    key: 'image',
    label: 'Image',
    api: 'image',
    value: 'dms-test:1',
    attrs: { required: true, maxLength: 512 },
  },
  {
    key: 'command',
    label: 'Command',
    api: 'command',
    type: 'textarea',
    value: 'sh\n-c\necho hello from the dashboard',
    hint: 'one argument per line; the first is the program',
    attrs: { required: true },
  },
  {
    key: 'env',
    label: 'Environment',
    api: 'env',
    type: 'textarea',
    value: '',
    hint: 'NAME=value, one a line',
  },
  {
    key: 'cpu',
    label: 'CPU (cores)',
    api: 'resources.cpu',
    type: 'number',
    value: '0.5',
    attrs: { required: true, min: 0.01, max: 1024, step: 0.01 },
  },
  {
    key: 'memory',
    label: 'Memory',
    api: 'resources.memory',
    value: '64MiB',
    hint: 'e.g. 64MiB, 1GiB',
    attrs: { required: true },
  },
  { key: 'disk', label: 'Disk', api: 'resources.disk', value: '', hint: 'optional, e.g. 1GiB' },
  {
    key: 'maxDuration',
    label: 'Max duration (s)',
    api: 'maxDuration',
    type: 'number',
    value: '60',
    attrs: { required: true, min: 1, max: 604800, step: 1 },
  },
  {
    key: 'maxPrice',
    label: 'Max price (micro-tokens, whole run)',
    api: 'maxPrice',
    type: 'number',
    value: '100000',
    attrs: { required: true, min: 0, step: 1 },
  },
]

/** The job spec the form's values make (numbers as numbers; empty optional fields left out). */
export function specOf(v: Record<string, string>): Record<string, unknown> {
  const env: Record<string, string> = {}
  for (const line of v.env.split('\n').filter((l) => l.trim() !== '')) {
    const i = line.indexOf('=')
    env[i < 0 ? line : line.slice(0, i)] = i < 0 ? '' : line.slice(i + 1)
  }
  const num = (s: string) => (s.trim() === '' ? undefined : Number(s))
  return {
    ...(v.name.trim() !== '' ? { name: v.name.trim() } : {}),
    image: v.image.trim(),
    command: v.command.split('\n').filter((l, i, all) => l !== '' || i < all.length - 1),
    ...(Object.keys(env).length > 0 ? { env } : {}),
    resources: {
      cpu: num(v.cpu),
      memory: v.memory.trim(),
      ...(v.disk.trim() !== '' ? { disk: v.disk.trim() } : {}),
    },
    maxDuration: num(v.maxDuration),
    maxPrice: num(v.maxPrice),
  }
}

export function NewJob() {
  const [values, setValues] = useState<Record<string, string>>(
    Object.fromEntries(FIELDS.map((f) => [f.key, f.value])),
  )
  const [problem, setProblem] = useState<{ field?: string; message: string } | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  usePainted(true)

  const submit = (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setProblem(undefined)
    api<{ id: string }>('POST', '/v1/jobs', specOf(values))
      .then((r) => location.assign(`#/jobs/${r.id}`))
      .catch((err: Error) =>
        setProblem({ field: err instanceof ApiProblem ? err.field : undefined, message: err.message }),
      )
      .finally(() => setBusy(false))
  }
  const owner = (f: Field) =>
    problem?.field !== undefined && (problem.field === f.api || problem.field.startsWith(`${f.api}.`))
  const claimed = FIELDS.some(owner)
  return (
    <section>
      <h1>Post a job</h1>
      <form id="new-job" class="form" onSubmit={submit} novalidate>
        {FIELDS.map((f) => {
          const props = {
            id: `f-${f.key}`,
            name: f.key,
            value: values[f.key],
            'aria-invalid': owner(f),
            onInput: (e: Event) =>
              setValues({ ...values, [f.key]: (e.currentTarget as HTMLInputElement).value }),
            ...f.attrs,
          }
          return (
            <label class={owner(f) ? 'invalid' : ''}>
              <span>{f.label}</span>
              {f.type === 'textarea' ? (
                <textarea rows={3} {...props} />
              ) : f.type === 'number' ? (
                <input type="number" {...props} />
              ) : (
                <input type="text" {...props} />
              )}
              {f.hint !== undefined && <small>{f.hint}</small>}
              {owner(f) && (
                <small class="error field-error" data-field={problem?.field}>
                  {problem?.message}
                </small>
              )}
            </label>
          )
        })}
        {problem !== undefined && !claimed && <p class="error field-error">{problem.message}</p>}
        <button type="submit" id="post-job" disabled={busy}>
          {busy ? 'Posting…' : 'Post job'}
        </button>
      </form>
    </section>
  )
}
