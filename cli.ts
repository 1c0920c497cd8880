#!/usr/bin/env node
/**
 * The toolplane command line (`npx toolplane --help`): a thin entry over cli/, one file per command group.
 */
import { main } from './cli/main';

export { buildProgram } from './cli/program';
export { main, exitCodeOf } from './cli/main';
export { ExitCode } from './cli/exit-codes';
export { readScript, parseModel, agentRunInput, resultJson, type RunOptions } from './cli/run';

if (require.main === module) {
  void main(process.argv).then((code) => process.exit(code));
}
