/**
 * Every `dms` command, in the order `dms --help` lists them. A command (or a group of
 * subcommands) is one file that exports a `RegisterCommand`; add a command by adding its file and
 * one line here (specs/cli.md, "Adding a command").
 */
import { registerAction } from './action.js'
import { registerBlob } from './blob.js'
import { registerCompletion } from './completion.js'
import { registerContractDb } from './contract-db.js'
import { registerDashboard } from './dashboard.js'
import { registerDemo } from './demo.js'
import { registerDevnet } from './devnet.js'
import { registerEarnings } from './earnings.js'
import { registerInit } from './init.js'
import { registerJob } from './job.js'
import { registerKey } from './key.js'
import { registerMode } from './mode.js'
import { registerPeers } from './peers.js'
import { registerQueue } from './queue.js'
import { registerResources } from './resources.js'
import { registerRun } from './run.js'
import { registerSwarmKey } from './swarm-key.js'
import { registerTopics } from './topics.js'
import type { RegisterCommand } from './types.js'
import { registerVersion } from './version.js'
import { registerWorker } from './worker.js'
import { registerWorkflow } from './workflow.js'

export const COMMANDS: readonly RegisterCommand[] = [
  registerInit,
  registerRun,
  registerPeers,
  registerDashboard,
  registerTopics,
  registerSwarmKey,
  registerWorkflow,
  registerWorker,
  registerAction,
  registerJob,
  registerBlob,
  registerDevnet,
  registerQueue,
  registerMode,
  registerResources,
  registerKey,
  registerEarnings,
  registerContractDb,
  registerDemo,
  registerVersion,
  registerCompletion,
]
