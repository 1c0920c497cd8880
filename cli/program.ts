// The toolplane command line: one program, one file per command group.
import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { registerBudget } from './budget';
import { registerCancel } from './cancel';
import { registerDecide } from './decide';
import { registerDescribe } from './describe';
import { registerEscalations } from './escalations';
import { EXIT_CODES_HELP } from './exit-codes';
import { registerLedger } from './ledger';
import { registerList } from './list';
import { registerManifest } from './manifest';
import { registerReplay } from './replay';
import { registerReset } from './reset';
import { registerRun } from './run';
import { registerShow } from './show';
import { registerWorker } from './worker';
import { registerGateway } from './gateway';

/** The installed package's version: package.json sits above cli/ in the source, two above in lib/cli/. */
function packageVersion(): string {
  for (const dir of [path.dirname(__dirname), path.dirname(path.dirname(__dirname))]) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version: string };
      if (pkg.name === 'toolplane') return pkg.version;
    }
  }
  return 'unknown';
}

export function buildProgram(
  out: (line: string) => void = console.log,
  err: (line: string) => void = console.error,
): Command {
  // On the process's own console, text goes out as it arrives; a caller that takes lines gets lines.
  const cli =
    out === console.log ? { out, err, write: (text: string) => void process.stdout.write(text) } : { out, err };
  const program = new Command()
    .name('toolplane')
    .description('Durable, governed tool calls for AI agents on Temporal')
    .version(packageVersion())
    .exitOverride()
    // Inherited by every command: help and commander's own errors go where the caller's output goes.
    .configureOutput({ writeOut: (s) => out(s.replace(/\n$/, '')), writeErr: (s) => err(s.replace(/\n$/, '')) })
    .showHelpAfterError('(see --help)')
    .addHelpText('after', EXIT_CODES_HELP);
  registerWorker(program);
  registerGateway(program);
  registerRun(program, cli);
  registerList(program, cli);
  registerDescribe(program, cli);
  registerShow(program, cli);
  registerEscalations(program, cli);
  registerDecide(program, cli);
  registerCancel(program, cli);
  registerReset(program, cli);
  registerReplay(program, cli);
  registerManifest(program, cli);
  registerLedger(program, cli);
  registerBudget(program, cli);
  return program;
}
