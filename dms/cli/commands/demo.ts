/** `dms demo`: a devnet and one job to settlement. */
import type { RegisterCommand } from './types.js'

export const registerDemo: RegisterCommand = (program) => {
  program
    .command('demo')
    .description(
      'start a devnet (contract-db, 2 providers, requester as separate processes) and run one job to settlement, printing the journey',
    )
    .option(
      '--image <image>',
      'image to run (build it with scripts/build-test-image.sh)',
      process.env.DMS_TEST_IMAGE ?? 'dms-test:1',
    )
    .option('--keep', 'keep the demo data directory and logs')
    .action(async (o: { image: string; keep?: boolean }) => (await import('../demo.js')).demoCommand(o))
}
