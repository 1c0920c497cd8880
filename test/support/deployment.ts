// Worker Versioning in tests: making a version current, and reading which version ran a run.
import type { Client } from '@temporalio/client';
import { decodeVersioningBehavior, type VersioningBehavior } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { waitFor } from './wait';

type History = temporal.api.history.v1.IHistory;

/**
 * `temporal worker deployment set-current-version`, through the client: retried until the server
 * knows the version, which it learns only once a worker of that version has polled.
 */
export async function makeCurrent(
  client: Client,
  deploymentName: string,
  buildId: string,
  timeoutMs = 120_000,
): Promise<void> {
  await waitFor(
    `version ${buildId} of worker deployment ${deploymentName} to become current`,
    timeoutMs,
    async () => {
      await client.workflowService.setWorkerDeploymentCurrentVersion({
        namespace: client.options.namespace,
        deploymentName,
        buildId,
        identity: 'toolplane-test',
      });
      return true;
    },
    500,
  );
}

export interface RunVersion {
  behavior?: VersioningBehavior;
  deploymentName?: string;
  buildId?: string;
}

/** The version a run is on, as the server says (`versioning_info`). */
export async function versionOf(client: Client, workflowId: string, runId?: string): Promise<RunVersion> {
  const d = await client.workflow.getHandle(workflowId, runId).describe();
  const v = d.raw.workflowExecutionInfo?.versioningInfo;
  return {
    behavior: decodeVersioningBehavior(v?.behavior),
    deploymentName: v?.deploymentVersion?.deploymentName ?? undefined,
    buildId: v?.deploymentVersion?.buildId ?? undefined,
  };
}

export interface TaskRecord {
  /** Who completed each workflow task, the version it reported, and the behavior. */
  workflowTasks: { identity: string; buildId?: string; behavior?: VersioningBehavior }[];
  /** Who picked up each activity task. */
  activityWorkers: string[];
  /** Workflow tasks that failed (a non-determinism error is one). */
  failedWorkflowTasks: string[];
  /** The first command the run's code issued. */
  firstCommand?: string;
}

/** What a run's history says about the workers and versions that ran it. */
export function tasksOf(history: History): TaskRecord {
  const events = history.events ?? [];
  const record: TaskRecord = { workflowTasks: [], activityWorkers: [], failedWorkflowTasks: [] };
  let completed = false;
  for (const e of events) {
    const wft = e.workflowTaskCompletedEventAttributes;
    if (wft) {
      record.workflowTasks.push({
        identity: wft.identity ?? '',
        buildId: wft.deploymentVersion?.buildId ?? undefined,
        behavior: decodeVersioningBehavior(wft.versioningBehavior),
      });
      completed = true;
      continue;
    }
    if (e.activityTaskStartedEventAttributes)
      record.activityWorkers.push(e.activityTaskStartedEventAttributes.identity ?? '');
    if (e.workflowTaskFailedEventAttributes)
      record.failedWorkflowTasks.push(
        `${e.workflowTaskFailedEventAttributes.cause}: ${e.workflowTaskFailedEventAttributes.failure?.message}`,
      );
    if (completed && record.firstCommand === undefined) {
      const kind = Object.keys(e).find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k]);
      // A workflow task completed without commands is a heartbeat (a local activity outlasting the task
      // timeout on a loaded machine): the first command comes after the next task.
      if (!kind?.startsWith('workflowTask')) record.firstCommand = kind?.replace(/EventAttributes$/, '');
    }
  }
  return record;
}
