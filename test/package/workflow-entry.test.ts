// toolplane/workflow is bundled into Temporal's sandbox: it must pull in nothing Node-only.
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { testDir } from '../support/env';
import fs from 'node:fs';

it('bundles toolplane/workflow with Temporal’s bundler, Node built-ins refused', async () => {
  const dir = testDir('workflow-entry');
  const file = path.join(dir, 'workflows.ts');
  fs.writeFileSync(file, `export * from '${path.resolve(__dirname, '..', '..', 'workflow.ts').replace(/\.ts$/, '')}';\n`);
  const errors: string[] = [];
  const { code } = await bundleWorkflowCode({ workflowsPath: file, logger: { trace() {}, debug() {}, info() {}, warn: (m) => errors.push(m), error: (m) => errors.push(m), log() {} } });
  expect(code.length).toBeGreaterThan(0);
  expect(errors.filter((e) => /node:|built-?in/i.test(e))).toEqual([]);
});
