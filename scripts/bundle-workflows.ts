// Bundles the built workflows once, at build time, so the CLI worker starts without the bundler.
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_INTERCEPTOR_MODULES } from '../workflows/path';

async function main(): Promise<void> {
  const lib = path.resolve(__dirname, '..', 'lib');
  const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(lib, 'workflows', 'index.js'),
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    logger: quiet,
  });
  fs.writeFileSync(path.join(lib, 'workflow-bundle.js'), code);
  console.error(`wrote lib/workflow-bundle.js (${Math.round(code.length / 1024)} KiB)`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
