/** `dms dashboard`: a one-time login link to the node's web dashboard (specs/dashboard.md). */
import type { RegisterCommand } from './types.js'

export const registerDashboard: RegisterCommand = (program, { socketOpt }) => {
  program
    .command('dashboard')
    .description(
      "print a one-time login link to the node's web dashboard (served on the API's TCP listener, api.tcp)",
    )
    .option('--open', 'also open the link with xdg-open')
    .option('--json', 'print JSON: { url, expiresAt }')
    .option(...socketOpt)
    .action(async (o: { socket: string; open?: boolean; json?: boolean }) =>
      (await import('../dashboard.js')).dashboardCommand(o),
    )
}
