// Starting a run from a client: the input checked before anything starts, the workflow id its
// credential is bound to, and toolplane's search attributes (checked once per client, set on the run).
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { Manifest } from '../catalog/manifest';
import { RunInputInvalid } from '../catalog/errors';
import { boundWorkflowId } from '../identity/credentials';
import { boundInput } from '../identity/claims';
import { runInputBinding } from '../common/input-binding';
import { DEFAULT_TASK_QUEUE, WorkflowName } from '../common/names';
import { assertRunInput } from '../common/run-input';
import { MANIFEST_DIGEST, REFUSALS, WAITING_FOR, WaitingFor } from '../common/search-attributes';
import type { AgentRunInput } from '../workflows/agent/run';
import type { ToolRunInput } from '../workflows/tool-run';
import { checkSearchAttributes } from './search-attributes';

export interface StartOptions {
  taskQueue?: string;
  workflowId?: string;
  /**
   * The manifest the workers serve, when the caller has it: a grant it does not declare is refused here,
   * before anything starts. Without it only the input's shape is checked; the worker decides the rest.
   */
  manifest?: Manifest;
}

/**
 * The run's workflow id: the one its credential is bound to (`toolplane_workflow_id`), the one asked
 * for, or a fresh one. A credential bound to another id than the one asked for starts nothing.
 */
/** A credential bound to another input than the one started (the worker would refuse it, `wrong_input`) is refused here first. */
function refuseOtherInput(workflow: 'agentRun' | 'toolRun', input: { credential?: string }): void {
  const bound = boundInput(input.credential);
  if (bound !== undefined && bound !== runInputBinding(workflow, input))
    throw new RunInputInvalid(workflow, [
      {
        path: 'credential',
        message: 'is bound to another input than this one (toolplane_input); mint it for this input',
      },
    ]);
}

function workflowIdFor(
  workflow: 'agentRun' | 'toolRun',
  credential: string | undefined,
  asked: string | undefined,
  prefix: string,
): string {
  const bound = boundWorkflowId(credential);
  if (bound && asked && bound !== asked)
    throw new RunInputInvalid(workflow, [
      { path: 'credential', message: `is bound to workflow ${bound}, but the run is started as ${asked}` },
    ]);
  return bound ?? asked ?? `${prefix}-${randomUUID()}`;
}

/** Each client checks its namespace's search attributes once, before its first run. */
const checked = new WeakMap<Client, Promise<void>>();
function searchAttributesChecked(client: Client): Promise<void> {
  let check = checked.get(client);
  if (!check) {
    check = checkSearchAttributes(client.connection.operatorService, client.options.namespace);
    // A failed check (missing attributes, a network error) is asked again next time.
    check.catch(() => checked.delete(client));
    checked.set(client, check);
  }
  return check;
}

/**
 * Toolplane's search attributes for a run: the manifest it is pinned to, and (so `toolplane list
 * --refused/--waiting` can filter from the start) no refusals, waiting for nobody. Not the principal:
 * the run labels itself with the one the worker established, never with a client's word.
 */
function searchAttributesOf(input: { manifestDigest?: string }): SearchAttributePair[] {
  return [
    { key: REFUSALS, value: 0 },
    { key: WAITING_FOR, value: WaitingFor.None },
    ...(input.manifestDigest ? [{ key: MANIFEST_DIGEST, value: input.manifestDigest }] : []),
  ];
}

/**
 * Starts an agent run; the worker decides what it may reach. A malformed input (a bad deadline or turn
 * limit, a script of the wrong shape, a grant the given manifest does not declare) throws `RunInputInvalid`
 * and starts nothing; so does a namespace without toolplane's search attributes (`SearchAttributesMissing`,
 * naming the command that registers them).
 */
export async function startAgentRun(client: Client, input: AgentRunInput, opts: StartOptions = {}) {
  assertRunInput('agentRun', input, opts.manifest);
  refuseOtherInput('agentRun', input);
  await searchAttributesChecked(client);
  return client.workflow.start(WorkflowName.AgentRun, {
    taskQueue: opts.taskQueue ?? DEFAULT_TASK_QUEUE,
    workflowId: workflowIdFor('agentRun', input.credential, opts.workflowId, 'agent'),
    args: [input],
    typedSearchAttributes: searchAttributesOf(input),
    staticSummary: input.prompt.slice(0, 200),
  });
}

/**
 * Starts a fixed list of calls without the data-flow gate; only a worker configured with
 * `allowUngovernedToolRun` serves it, any other refuses the run.
 */
export async function startToolRun(client: Client, input: ToolRunInput, opts: StartOptions = {}) {
  assertRunInput('toolRun', input, opts.manifest);
  refuseOtherInput('toolRun', input);
  await searchAttributesChecked(client);
  return client.workflow.start(WorkflowName.ToolRun, {
    taskQueue: opts.taskQueue ?? DEFAULT_TASK_QUEUE,
    workflowId: workflowIdFor('toolRun', input.credential, opts.workflowId, 'tools'),
    args: [input],
    typedSearchAttributes: searchAttributesOf(input),
  });
}
