// Node-only: Temporal Worker Versioning for a toolplane worker, shared by the plugin and `toolplane worker`.
import type { VersioningBehavior } from '@temporalio/common';
import type { WorkerDeploymentOptions } from '@temporalio/worker';
import { ToolplaneError } from '../catalog/errors';
import { ErrorCode } from '../catalog/error-codes';

/**
 * Temporal Worker Versioning: the version of a worker deployment this worker is. Each deploy whose
 * workflow code differs gets a new `buildId`; making it current (`temporal worker deployment
 * set-current-version`) sends new runs to it, while a running run stays on the version it started on.
 */
export interface ToolplaneDeployment {
  /** The worker deployment, shared by every version of one fleet (such as `support-desk`); no `.` or `:`. */
  deploymentName: string;
  /** This worker's version within the deployment (such as a commit or image tag). */
  buildId: string;
  /**
   * The versioning behavior of every workflow on this worker that declares none of its own, toolplane's
   * included (they declare none, so that unversioned workers can run them). Default PINNED: a run
   * finishes on the version that started it. AUTO_UPGRADE moves running runs to each new current
   * version, so every change to their commands needs a patch (docs/versioning.md).
   */
  defaultVersioningBehavior?: VersioningBehavior;
}

/**
 * The worker's `workerDeploymentOptions` for a deployment version; refuses names Temporal would
 * reject only once the worker polls (server 1.29: no `.` or `:` in a deployment name, neither
 * field empty or starting with `__`).
 */
export function workerDeploymentOptions(d: ToolplaneDeployment): WorkerDeploymentOptions {
  const bad = (what: string, value: string): string | undefined =>
    typeof value !== 'string' || value.trim() === ''
      ? `${what} is empty`
      : value.startsWith('__')
        ? `${what} ${JSON.stringify(value)} starts with "__", which Temporal reserves`
        : value !== value.trim()
          ? `${what} ${JSON.stringify(value)} has leading or trailing spaces`
          : undefined;
  const problem =
    bad('the deployment name', d.deploymentName) ??
    (/[.:]/.test(d.deploymentName)
      ? `the deployment name ${JSON.stringify(d.deploymentName)} contains "." or ":", which Temporal refuses`
      : undefined) ??
    bad('the build id', d.buildId);
  if (problem) throw new ToolplaneError(ErrorCode.UsageError, `worker deployment: ${problem}`);
  const behavior = d.defaultVersioningBehavior ?? 'PINNED';
  if (behavior !== 'PINNED' && behavior !== 'AUTO_UPGRADE')
    throw new ToolplaneError(
      ErrorCode.UsageError,
      `worker deployment: defaultVersioningBehavior ${JSON.stringify(behavior)} is neither PINNED nor AUTO_UPGRADE`,
    );
  return {
    version: { deploymentName: d.deploymentName, buildId: d.buildId },
    useWorkerVersioning: true,
    defaultVersioningBehavior: behavior,
  };
}
