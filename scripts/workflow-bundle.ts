// Toolplane's workflows bundled ahead of time (the package build, the tests, the fault campaigns), always with the
// workflow interceptor modules the plugin puts in every bundle it makes: a worker handed this bundle emits the
// same workflow spans as one that bundles for itself.
import fs from 'node:fs';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from '../runtime/workflow-modules';

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };

/** Bundles the workflows at `workflowsPath` into `file`; returns the bundle's size in bytes. */
export async function writeWorkflowBundle(file: string, workflowsPath: string = WORKFLOWS_PATH): Promise<number> {
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    logger: quiet,
  });
  fs.writeFileSync(file, code);
  return code.length;
}
