// Bundles the built workflows once, at build time, so the CLI worker starts without the bundler.
import path from 'node:path';
import { writeWorkflowBundle } from './workflow-bundle';

async function main(): Promise<void> {
  const lib = path.resolve(__dirname, '..', 'lib');
  const bytes = await writeWorkflowBundle(
    path.join(lib, 'workflow-bundle.js'),
    path.join(lib, 'workflows', 'index.js'),
  );
  console.error(`wrote lib/workflow-bundle.js (${Math.round(bytes / 1024)} KiB)`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
