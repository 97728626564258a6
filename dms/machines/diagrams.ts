/**
 * The machines whose diagrams specs/state-machines.md shows, and the text between their markers
 * (`<!-- machine:<name> -->` ... `<!-- /machine:<name> -->`).
 */
import { createContractMachine } from '../contract-db/contract-machine.js'
import { createJobMachine, type JobSteps } from '../orchestrator/job-machine.js'
import { createBidMachine } from '../provider/bid-machine.js'
import { createWorkflowMachine } from '../workflows/machine.js'
import { mermaidOf } from './diagram.js'

const noStep = () => Promise.resolve({})
const steps: JobSteps = {
  waitUntilStart: noStep,
  waitForCapacity: noStep,
  collectBids: noStep,
  requestLock: noStep,
  closeContract: noStep,
  invoke: noStep,
  awaitResult: noStep,
  verify: noStep,
  settle: noStep,
  cancel: noStep,
}

export const DIAGRAMS: Record<string, () => string> = {
  job: () => mermaidOf(createJobMachine(steps, { now: () => 0 })),
  bid: () =>
    mermaidOf(
      createBidMachine(
        { now: () => 0 },
        { contractWindowMs: 15_000, lockTtlMs: 60_000, provisionTimeoutMs: 300_000 },
      ),
    ),
  contract: () =>
    mermaidOf(
      createContractMachine(
        { commit: () => Promise.resolve(), notify: () => {}, signSettlement: () => '' },
        { now: () => 0 },
      ),
    ),
  workflow: () => mermaidOf(createWorkflowMachine({ now: () => 0 })),
}

const block = (name: string) =>
  new RegExp(`(<!-- machine:${name} -->\\n)[\\s\\S]*?(<!-- /machine:${name} -->)`)

/** The spec text with every generated block replaced by the current diagram. */
export function withDiagrams(spec: string): string {
  let out = spec
  for (const [name, make] of Object.entries(DIAGRAMS)) {
    if (!block(name).test(out)) throw new Error(`no <!-- machine:${name} --> block in the spec`)
    out = out.replace(
      block(name),
      (_m, open: string, close: string) => `${open}\n\`\`\`mermaid\n${make()}\n\`\`\`\n\n${close}`,
    )
  }
  return out
}
