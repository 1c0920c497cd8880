// `toolplane gateway`: a worker and the MCP gateway in one process; its own options are parsed by gateway-run.ts.
import type { Command } from 'commander';

export function registerGateway(program: Command): void {
  program
    .command('gateway')
    .description(
      "serve the manifest's tools as an MCP server (Streamable HTTP, OAuth bearer tokens) and run the worker behind it (`gateway --help`)",
    )
    .allowUnknownOption()
    .helpOption(false)
    .argument('[args...]')
    .action(async (args: string[]) => {
      // Loaded only here: the rest of the CLI never pulls in the worker SDK, MCP or the activities.
      // eslint-disable-next-line @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports
      const { runGatewayCli } = require('./gateway-run') as typeof import('./gateway-run');
      await runGatewayCli(['node', 'toolplane-gateway', ...args]);
    });
}
