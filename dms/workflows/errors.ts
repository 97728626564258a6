/** The workflows' errors, each with a stable `code` (specs/workflow.md, specs/rest-api.md). */
import { DmsError } from '../../actors/errors.js'

/** A workflow document refused: `field` is the path of the field at fault (specs/workflow.md). */
export class InvalidWorkflowError extends DmsError {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super('INVALID_WORKFLOW', `${field || 'workflow'}: ${problem}`)
  }
}

export class WorkflowNotFoundError extends DmsError {
  constructor(id: string) {
    super('WORKFLOW_NOT_FOUND', `no workflow ${id}`)
  }
}
export class TaskNotFoundError extends DmsError {
  readonly statusCode = 404
  constructor(id: string, task: string) {
    super('TASK_NOT_FOUND', `workflow ${id} has no task ${task}`)
  }
}
export class WorkflowEndedError extends DmsError {
  constructor(id: string, state: string) {
    super('WORKFLOW_ENDED', `workflow ${id} already ended: ${state}`)
  }
}
/** The balance does not cover the sum of the tasks' worst-case escrows. */
export class InsufficientBalanceError extends DmsError<{ plan: number; balance: number; shortfall: number }> {
  constructor(plan: number, balance: number) {
    super(
      'INSUFFICIENT_BALANCE',
      `the workflow may lock ${plan} micro-tokens of escrow (the sum of its tasks' maxPrice), the balance is ${balance}: short by ${plan - balance}`,
      { plan, balance, shortfall: plan - balance },
    )
  }
}

/** The contract-db did not answer the balance query: nothing is started unchecked. */
export class BalanceUnknownError extends DmsError {
  readonly statusCode = 503
  constructor(cause: unknown) {
    super(
      'BALANCE_UNKNOWN',
      `cannot check the balance at the contract-db (${(cause as Error).message}): try again once it answers`,
    )
  }
}

/**
 * A task's outputs were left at its provider for the tasks downstream and released when the
 * workflow ended (specs/workflow.md, "Archives released"): they are gone, not merely unreachable.
 */
export class OutputsReleasedError extends DmsError<{ task: string; workflowState: string }> {
  readonly statusCode = 410
  constructor(id: string, task: string, state: string) {
    super(
      'OUTPUTS_RELEASED',
      `task ${task}'s outputs were left at its provider for the tasks downstream and released when workflow ${id} ended (${state}): ` +
        'fetch them while the workflow runs (dms workflow outputs), or set "keepOutputs": true in the workflow document to keep them after the end',
      { task, workflowState: state },
    )
  }
}
