// Workflow-safe: an MCP session is a run. The gateway starts it with its first `tools/call`
// (update-with-start) and a session pass, sends each call as an update, and ends it with `end`; the
// run also ends after an idle timeout, and continues as new between calls when Temporal suggests it,
// carrying its ticket, positions, provenance and call memo.
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { ErrorCode, StepErrorCode } from '../../catalog/error-codes';
import { RunFailureType } from '../../catalog/failure-types';
import {
  mcpCallUpdate,
  mcpEndUpdate,
  type McpCallOutcome,
  type McpSessionInput,
  type McpSessionState,
} from '../../common/gateway-protocol';
import type { JournalEntry } from '../../common/journal';
import {
  callProofFields,
  callSubject,
  endProofFields,
  proofRefusal,
  SESSION_MESSAGE_REFUSED,
  SessionRefusedReason,
  type SessionProof,
} from '../../common/session-proof';
import { Budget, type Usage } from '../gate/limits';
import type { ProvenanceState } from '../gate/provenance';
import type { RunStreamState } from '../run-stream';
import { StepCtx, type StepState } from '../step-ctx';
import { CallMemo } from './call-memo';
import { handleCall, refuseMalformed, type SessionCalls } from './session-call';
import { SessionProvenance } from './session-provenance';

/** A session without a call for this long ends (the gateway's option overrides it). */
export const DEFAULT_IDLE_TIMEOUT_MS = 30 * 60_000;

/** How a session's run ended, and its calls. */
export interface McpSessionResult {
  /** `ended`: the client ended it; `idle`: nobody called for the idle timeout. */
  status: 'ended' | 'idle';
  /** This run's calls; a continued session's earlier runs hold theirs in their histories. */
  journal: JournalEntry[];
}

/** What the session's handlers and loop share. */
interface Session {
  calls?: SessionCalls;
  /** Why the run could not open: every call is answered with it. */
  refused?: McpCallOutcome;
  ending: boolean;
  closed: boolean;
  /** Requests received, so the idle timer restarts on each. */
  arrivals: number;
}

/** Carried state and tickets come only from the run this one continues; a client that sends them is refused. */
function refuseForeignState(input: McpSessionInput): void {
  if (typeof input !== 'object' || input === null || (!input.pass && !input.carry))
    throw ApplicationFailure.nonRetryable(
      'an MCP session starts with a session pass from the gateway (or continues with its ticket)',
      RunFailureType.RunRefused,
    );
  if ((input.state || input.carry) && !workflowInfo().continuedFromExecutionRunId)
    throw ApplicationFailure.nonRetryable(
      'a session may not start from carried state; only a session continuing as new passes it on',
      RunFailureType.RunRefused,
    );
}

async function open(input: McpSessionInput): Promise<SessionCalls> {
  const state = input.state;
  const step = await StepCtx.open({
    ...(input.carry ? { carry: input.carry } : { pass: input.pass }),
    ...(input.manifestDigest ? { manifestDigest: input.manifestDigest } : {}),
    ...(state?.stream ? { stream: state.stream as RunStreamState } : {}),
  });
  if (state) step.resume(state.step as StepState);
  step.summarise(`MCP session of ${step.scope.principal}`);
  const startedAt = state?.startedAt ?? Date.now();
  const seen = new SessionProvenance(
    state ? { provenance: state.provenance as ProvenanceState, resultSeen: state.resultSeen } : undefined,
  );
  return {
    step,
    budget: new Budget({}, startedAt, 0, state?.usage as Usage | undefined, step.scope.caps),
    memo: new CallMemo(state),
    seen,
    provenance: seen.provenance,
    started: 0,
  };
}

/**
 * The key the gateway's messages to this session are signed with: the first pass names it (the worker
 * checks the pass's MAC, which covers it, as the run opens; a run whose pass fails answers nothing but
 * its refusal), and each continued run carries it. A session from before signed messages has none.
 */
function callKeyOf(input: McpSessionInput): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const key = input.state?.callKey ?? input.pass?.callKey;
  return typeof key === 'string' ? key : undefined;
}

/** Refuses, before it enters history, a message the gateway did not sign for this session (common/session-proof.ts). */
function refuseUnsigned(callKey: string | undefined, proof: unknown, fields: (issuedAt: number) => unknown[]): void {
  if (callKey === undefined) return;
  const p = (typeof proof === 'object' && proof !== null ? proof : {}) as SessionProof;
  let r: ReturnType<typeof proofRefusal>;
  try {
    r = proofRefusal(callKey, p, fields, Date.now());
  } catch {
    r = { reason: SessionRefusedReason.Malformed, message: 'the message cannot be read as the gateway sends it' };
  }
  if (r) throw ApplicationFailure.nonRetryable(r.message, SESSION_MESSAGE_REFUSED, { reason: r.reason });
}

/**
 * The update handlers, set before the run opens: the first call arrives with the start. Their validators
 * run before an update enters history (and never on replay): a call or an end the gateway did not sign,
 * or signed for other arguments, takes no position in the journal and asks nobody anything.
 */
function serveUpdates(s: Session, input: McpSessionInput): void {
  const workflowId = workflowInfo().workflowId;
  const callKey = callKeyOf(input);
  setHandler(
    mcpCallUpdate,
    async (req) => {
      refuseMalformed(req);
      if (s.closed)
        throw ApplicationFailure.nonRetryable('this MCP session has ended; start a new one', ErrorCode.SessionEnded);
      s.arrivals++;
      await condition(() => s.calls !== undefined || s.refused !== undefined);
      return s.refused ?? handleCall(s.calls!, req);
    },
    {
      validator: (req) => {
        // The proof first: an unsigned message is refused as such, whatever else it lacks.
        refuseUnsigned(callKey, req, (issuedAt) => callProofFields(workflowId, callSubject(req, issuedAt)));
        refuseMalformed(req);
      },
    },
  );
  setHandler(
    mcpEndUpdate,
    () => {
      s.ending = true;
    },
    { validator: (req) => refuseUnsigned(callKey, req, (issuedAt) => endProofFields(workflowId, issuedAt)) },
  );
}

/** Temporal suggests continuing, or the test-only knob's count of calls is reached. */
function shouldContinue(calls: SessionCalls, input: McpSessionInput): boolean {
  if (calls.memo.unsettled().length > 0) return false;
  const after = input.continueAsNewAfterCalls;
  return workflowInfo().continueAsNewSuggested || (after !== undefined && calls.started >= after);
}

async function continueSession(calls: SessionCalls, input: McpSessionInput): Promise<never> {
  const { step } = calls;
  const stream = await step.stream.handOver();
  const state: McpSessionState = {
    step: step.state(),
    ...calls.seen.state(),
    usage: calls.budget.usage,
    stream,
    ...calls.memo.state(),
    startedAt: input.state?.startedAt ?? workflowInfo().runStartTime.getTime(),
    ...(callKeyOf(input) !== undefined ? { callKey: callKeyOf(input) } : {}),
  };
  const { pass: _pass, ...rest } = input;
  return continueAsNew<typeof mcpSession>({
    ...rest,
    carry: step.carry(),
    ...(step.scope.manifestDigest ? { manifestDigest: step.scope.manifestDigest } : {}),
    state,
  });
}

/** Serves calls until the session ends, idles out, or continues as new. */
async function serveCalls(s: Session, calls: SessionCalls, input: McpSessionInput): Promise<McpSessionResult> {
  const idleMs = input.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const busy = () => calls.memo.unsettled().length > 0;
  for (;;) {
    const arrivals = s.arrivals;
    const woke = await condition(() => s.ending || s.arrivals !== arrivals || shouldContinue(calls, input), idleMs);
    if (s.ending || (!woke && !busy())) {
      s.closed = true;
      // Calls being sent finish; a call waiting for a person is left undecided (its client was told it waits).
      await condition(() =>
        calls.memo.unsettled().every((slot) => calls.step.waitingOn().some((p) => p.position === slot.position)),
      );
      await condition(allHandlersFinished);
      calls.step.releaseLeases();
      return { status: s.ending ? 'ended' : 'idle', journal: calls.step.ordered() };
    }
    if (shouldContinue(calls, input)) {
      await condition(allHandlersFinished);
      if (shouldContinue(calls, input) && !s.ending) await continueSession(calls, input);
    }
  }
}

/** An MCP session: one governed run serving the calls of one client session. */
export async function mcpSession(input: McpSessionInput): Promise<McpSessionResult> {
  const s: Session = { ending: false, closed: false, arrivals: 0 };
  serveUpdates(s, input);
  refuseForeignState(input);
  let calls: SessionCalls;
  try {
    calls = await open(input);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const code = (err instanceof ApplicationFailure ? err.type : undefined) ?? StepErrorCode.Failed;
    s.refused = { status: 'refused', code, reason };
    s.closed = true;
    await condition(allHandlersFinished);
    throw err;
  }
  s.calls = calls;
  try {
    return await serveCalls(s, calls, input);
  } catch (err) {
    calls.step.ended(err);
    throw err;
  }
}
