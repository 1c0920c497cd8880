// `toolplane worker`: run a worker; its own options are parsed by worker-run.ts.
import type { Command } from 'commander';

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description(
      'run a toolplane worker: the manifest declares every tool, principal and model endpoint it serves (`worker --help`)',
    )
    .allowUnknownOption()
    .helpOption(false)
    .argument('[args...]')
    .action(async (args: string[]) => {
      // Loaded only here: the rest of the CLI never pulls in the worker SDK, MCP or the activities.
      // eslint-disable-next-line @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports
      const { runWorkerCli } = require('./worker-run') as typeof import('./worker-run');
      await runWorkerCli(['node', 'toolplane-worker', ...args]);
    });
}
