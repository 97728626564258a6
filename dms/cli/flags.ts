/** Small helpers for option definitions, kept free of imports (types only) so that `dms --help` loads little. */
import type { MemberRun } from '../workload/workload.js'

/** `job run`'s default price ceiling (micro-tokens): 1 token, above a devnet provider's ask. */
export const DEFAULT_MAX_PRICE = 1_000_000

/** Commander's reducer for a repeatable option. */
export const collect = (v: string, all: string[] = []): string[] => [...all, v]

/**
 * `dms job run`'s flags that set one of the workload member's run fields as given
 * (dms/workload/workload.ts, `memberRunFields`): the spec field (commander's camelCase of the
 * flag), the flag and its help. `commands/job.ts` declares them and `job-run.ts` copies them into
 * the spec (and refuses them with -f): a new string field of the member is one entry here.
 */
export const RUN_FIELD_FLAGS = [
  {
    field: 'workdir',
    flag: '--workdir <path>',
    help: "the command's working directory, an absolute path (default: the image's)",
  },
] as const satisfies ReadonlyArray<{ field: keyof MemberRun; flag: string; help: string }>

/** A run field `dms job run` sets from its flag. */
export type RunFieldFlag = (typeof RUN_FIELD_FLAGS)[number]['field']
