/**
 * The workflow document a requester posts (specs/workflow.md): named tasks, each a job spec plus
 * the tasks it runs after and inputs taken from an upstream task's outputs. Declared once
 * (TypeBox): the schema checks the shape (unknown fields refused) and `parseWorkflow` checks what a
 * schema cannot (names, cycles, files an upstream cannot produce, the task limit), each refusal
 * naming the field at fault.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import { InvalidJobSpecError, jobSpecSchema, parseJobSpec, type JobSpec } from '../orchestrator/job-spec.js'
import { strictObject as obj } from '../schema.js'
import { InvalidWorkflowError } from './errors.js'
import { findCycle } from './graph.js'
import { checkPods } from './pods.js'

/** Default of the requester's `maxWorkflowTasks`. */
export const DEFAULT_MAX_WORKFLOW_TASKS = 32
/** Hard ceiling of `maxWorkflowTasks` and of the schema's `tasks` (checked before any work). */
export const MAX_WORKFLOW_TASKS = 256

const name = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$' })
/** A relative path without `.` or `..` segments (an output path, or where an input lands). */
const relPath = Type.String({
  minLength: 1,
  maxLength: 1024,
  pattern: '^(?!/)(?!.*(^|/)\\.\\.?(/|$)).*[^/]$',
})

/** One input taken from an upstream task's outputs. */
const fromTaskInput = obj({
  fromTask: name,
  path: Type.Optional({
    ...relPath,
    description: "one file of the upstream's outputs; absent: the whole archive, unpacked under `as`",
  }),
  as: Type.Optional({ ...relPath, description: 'where under /inputs; default: `path`, or the task name' }),
})

/** The workflow document as posted (specs/workflow.md). */
export const workflowSchema = obj(
  {
    name: Type.Optional(Type.String({ maxLength: 128, pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]*$' })),
    keepOutputs: Type.Optional(
      Type.Boolean({
        description:
          'true: the archives left at providers for hand-offs are not released when the workflow ends (fetch them any time); default false',
      }),
    ),
    tasks: Type.Array(
      obj({
        name,
        job: jobSpecSchema,
        runAfter: Type.Optional(Type.Array(name, { maxItems: MAX_WORKFLOW_TASKS, uniqueItems: true })),
        from: Type.Optional(Type.Array(fromTaskInput, { maxItems: 1000 })),
        outputs: Type.Optional(
          Type.Array(relPath, {
            maxItems: 1000,
            description: 'the files the task writes under /outputs; when given, references are checked',
          }),
        ),
        pod: Type.Optional({
          ...name,
          description:
            'tasks with the same pod name (2 to 8) run together as one job on one provider, sharing /pod (specs/workflow.md, "Pods")',
        }),
      }),
      { minItems: 1, maxItems: MAX_WORKFLOW_TASKS },
    ),
  },
  { $id: 'Workflow' },
)

export type WorkflowInput = Static<typeof workflowSchema>

/** An input from an upstream: one file (`path`) or the whole archive, landing at `as` under /inputs. */
export interface FromTask {
  fromTask: string
  path?: string
  as: string
}

export interface WorkflowTask {
  name: string
  job: JobSpec
  /** Every task this one waits for: `runAfter` plus each `fromTask`, in first-named order. */
  after: string[]
  from: FromTask[]
  outputs?: string[]
  /** The pod the task runs in with the other tasks of that name (pods.ts). */
  pod?: string
}

export interface Workflow {
  name?: string
  /** The archives left at providers for hand-offs stay after the end (not released). */
  keepOutputs?: boolean
  tasks: WorkflowTask[]
}

export { InvalidWorkflowError, findCycle }

let compiled: ValidateFunction<WorkflowInput> | undefined
/** The workflow check, compiled at the first workflow checked (dms/schema.ts says why). */
function validator(): ValidateFunction<WorkflowInput> {
  if (compiled === undefined) {
    const ajv = new Ajv({ allErrors: false, strict: true })
    ajv.addSchema(jobSpecSchema)
    compiled = ajv.compile<WorkflowInput>(workflowSchema)
  }
  return compiled
}

function describe(e: ErrorObject): InvalidWorkflowError {
  const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.')
  const at = (f: string) => (path ? `${path}.${f}` : f)
  if (e.keyword === 'additionalProperties')
    return new InvalidWorkflowError(
      at((e.params as { additionalProperty: string }).additionalProperty),
      'unknown field',
    )
  if (e.keyword === 'required')
    return new InvalidWorkflowError(
      at((e.params as { missingProperty: string }).missingProperty),
      'is required',
    )
  if (e.keyword === 'anyOf')
    return new InvalidWorkflowError(path, 'must be a byte count or a size like "256MiB"')
  return new InvalidWorkflowError(path, e.message ?? 'is invalid')
}

/**
 * Validates a posted workflow; throws InvalidWorkflowError naming the field at fault (a task's job
 * spec problems are prefixed with `tasks.<i>.job`).
 */
export function parseWorkflow(input: unknown, opts: { maxTasks?: number } = {}): Workflow {
  const validate = validator()
  if (!validate(input)) throw describe((validate.errors ?? [])[0])
  const maxTasks = opts.maxTasks ?? DEFAULT_MAX_WORKFLOW_TASKS
  if (input.tasks.length > maxTasks)
    throw new InvalidWorkflowError(
      'tasks',
      `${input.tasks.length} tasks, this requester takes at most ${maxTasks}`,
    )
  const index = new Map<string, number>()
  input.tasks.forEach((t, i) => {
    if (index.has(t.name)) throw new InvalidWorkflowError(`tasks.${i}.name`, `${t.name} is named twice`)
    index.set(t.name, i)
  })
  const known = (field: string, ref: string, self: string) => {
    if (!index.has(ref)) throw new InvalidWorkflowError(field, `no task named ${ref}`)
    if (ref === self) throw new InvalidWorkflowError(field, `${self} cannot depend on itself`)
  }
  const tasks = input.tasks.map((t, i): WorkflowTask => {
    let job: JobSpec
    try {
      job = parseJobSpec(t.job)
    } catch (err) {
      if (err instanceof InvalidJobSpecError)
        throw new InvalidWorkflowError(`tasks.${i}.job.${err.field}`, err.message.replace(/^[^:]*: /, ''))
      throw err
    }
    // A task is one container: tasks run together as a pod through `pod`, each keeping its own row.
    if (job.members !== undefined)
      throw new InvalidWorkflowError(
        `tasks.${i}.job.members`,
        'a workflow task is one container: give tasks the same `pod` to run them together',
      )
    const after: string[] = []
    ;(t.runAfter ?? []).forEach((r, j) => {
      known(`tasks.${i}.runAfter.${j}`, r, t.name)
      after.push(r)
    })
    const from = (t.from ?? []).map((f, j): FromTask => {
      known(`tasks.${i}.from.${j}.fromTask`, f.fromTask, t.name)
      if (!after.includes(f.fromTask)) after.push(f.fromTask)
      return {
        fromTask: f.fromTask,
        ...(f.path !== undefined ? { path: f.path } : {}),
        as: f.as ?? f.path ?? f.fromTask,
      }
    })
    return {
      name: t.name,
      job,
      after,
      from,
      ...(t.outputs !== undefined ? { outputs: t.outputs } : {}),
      ...(t.pod !== undefined ? { pod: t.pod } : {}),
    }
  })
  // A reference to a file its upstream declares it does not write can never be met.
  tasks.forEach((t, i) =>
    t.from.forEach((f, j) => {
      const up = tasks[index.get(f.fromTask) as number]
      if (f.path !== undefined && up.outputs !== undefined && !up.outputs.includes(f.path))
        throw new InvalidWorkflowError(
          `tasks.${i}.from.${j}.path`,
          `${f.fromTask} declares outputs ${up.outputs.join(', ') || '(none)'}, not ${f.path}`,
        )
    }),
  )
  // Inputs must not land on the same path (the job's own inline inputs included).
  tasks.forEach((t, i) => {
    const seen = new Set((t.job.inputs ?? []).map((f) => f.path))
    t.from.forEach((f, j) => {
      if (seen.has(f.as))
        throw new InvalidWorkflowError(`tasks.${i}.from.${j}.as`, `${f.as} is used by another input`)
      seen.add(f.as)
    })
  })
  const cycle = findCycle(tasks)
  if (cycle !== undefined)
    throw new InvalidWorkflowError(`tasks.${index.get(cycle[0])}.runAfter`, `cycle ${cycle.join(' -> ')}`)
  checkPods(tasks)
  return {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.keepOutputs === true ? { keepOutputs: true } : {}),
    tasks,
  }
}
