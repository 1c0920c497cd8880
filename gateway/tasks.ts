// MCP tasks (2025-11-25) for `tools/call`: a client that asks for a task gets one at once, polls it with
// `tasks/get` and takes the outcome with `tasks/result`. A call that waits for a person is a `working`
// task (an approver decides) or `input_required` (the session's principal is asked), not a toolplane
// specific "waiting" result. The gateway keeps no task store: a task id is the call itself, sealed for
// its session (activities/identity/session-pass.ts), and each poll repeats the call under its key,
// which the session's run answers with the call's one outcome, never a second send.
import {
  ErrorCode as RpcCode,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolRequest,
  type CallToolResult,
  type CreateTaskResult,
  type GetTaskResult,
  type ServerCapabilities,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpCallOutcome } from '../common/gateway-protocol';
import { prepareCall, sendCall, waitForPerson, type CallContext, type CallLimits } from './call';
import type { OfferedTool } from './offer';
import { waitingText } from './results';
import type { SessionCall, SessionClient } from './session-client';
import type { RunIdentity } from '../common/ticket';

/** What the gateway declares at initialize: `tools/call` may run as a task; no listing, no cancel (a sent effect is not undone). */
export const TASKS_CAPABILITY: NonNullable<ServerCapabilities['tasks']> = { requests: { tools: { call: {} } } };

/** How often a client should poll a task that waits for a person. */
export const TASK_POLL_MS = 1000;

interface TaskDeps {
  sessions: SessionClient;
  offered: (identity: RunIdentity) => Map<string, OfferedTool>;
  limits: CallLimits;
}

/** The task's view of a call's outcome now: terminal once the call has one (a refusal too: its result says why). */
function taskOf(taskId: string, createdAt: number, outcome: McpCallOutcome, sessionId: string): Task {
  const waiting = outcome.status === 'waiting';
  return {
    taskId,
    status: !waiting ? 'completed' : outcome.question ? 'input_required' : 'working',
    ttl: null,
    createdAt: new Date(createdAt).toISOString(),
    lastUpdatedAt: new Date().toISOString(),
    ...(waiting ? { pollInterval: TASK_POLL_MS, statusMessage: waitingText(sessionId, outcome) } : {}),
  };
}

/** The call a task id names in this session, or a clear error (another session's, changed, or not a task id). */
function callOfTask(deps: TaskDeps, ctx: CallContext, taskId: unknown): { call: SessionCall; createdAt: number } {
  const sealed = deps.sessions.callOfTask(ctx.sessionId, taskId);
  if (!sealed)
    throw new McpError(
      RpcCode.InvalidParams,
      `params.taskId: no task of this session has that id (a task id is valid only in the session that created it)`,
    );
  const { createdAt, ...call } = sealed;
  return { call, createdAt };
}

/** A task-augmented `tools/call`: the call is sent, and the task answered with what it is now. */
export async function createCallTask(
  deps: TaskDeps,
  ctx: CallContext,
  params: CallToolRequest['params'],
): Promise<CreateTaskResult> {
  const prepared = prepareCall(deps, ctx, params);
  if ('invalid' in prepared)
    throw new McpError(
      RpcCode.InvalidParams,
      prepared.invalid.content.map((c) => (c.type === 'text' ? c.text : '')).join(' '),
    );
  const createdAt = Date.now();
  const { given: _given, ...call } = prepared.call;
  const taskId = deps.sessions.taskId(ctx.sessionId, { ...call, createdAt });
  const outcome = await sendCall(deps, ctx, prepared.call);
  return { task: taskOf(taskId, createdAt, outcome, ctx.sessionId) };
}

/** `tasks/get`: the call repeated under its key, which answers its outcome or that it still waits. */
export async function getCallTask(deps: TaskDeps, ctx: CallContext, taskId: string): Promise<GetTaskResult> {
  const { call, createdAt } = callOfTask(deps, ctx, taskId);
  return taskOf(taskId, createdAt, await sendCall(deps, ctx, call), ctx.sessionId);
}

/**
 * `tasks/result`: the call's outcome as its `tools/call` would have answered it, held open while it waits
 * for a person (up to the gateway's progress wait; past it, the waiting result, and the client polls on).
 */
export async function callTaskResult(
  deps: TaskDeps,
  ctx: CallContext,
  taskId: string,
): Promise<{ call: SessionCall; outcome: McpCallOutcome; related: CallToolResult['_meta'] }> {
  const { call } = callOfTask(deps, ctx, taskId);
  let outcome = await sendCall(deps, ctx, call);
  if (outcome.status === 'waiting' && !outcome.question) outcome = await waitForPerson(deps, ctx, call, outcome);
  return { call, outcome, related: { [RELATED_TASK_META_KEY]: { taskId } } };
}
