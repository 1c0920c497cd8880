// Workflow-safe: one governed tool call of an agent, the same for `agentRun` and the AI SDK tools.
// The gate judges the call against what the model had read when it wrote it; the output enters the
// run's provenance as the tool's untrusted data. A refusal is an answer the model is told, not an error.
import type { OfferedTool } from '../../catalog/tool-catalog';
import type { CitedOrigin } from '../../common/wire';
import { governanceGate } from '../gate/governance';
import type { Budget } from '../gate/limits';
import type { Provenance, ProvenanceView } from '../gate/provenance';
import type { Delegate } from '../call/perform';
import type { CallOptions, StepCtx } from '../step-ctx';
import { replyingWith } from '../call/options';
import { StepError } from '../step-error';
import { produceToolOutput } from '../gate/tool-output-labels';
import type { LaneEnd } from '../lanes';
import type { McpCallProof } from '../../common/session-proof';

/**
 * What the model is told when a call is refused: the rule and the reason.
 *
 * @experimental
 */
export interface RefusedToolResult {
  error: string;
  rule?: string;
  reason: string;
}

export interface AgentCall {
  toolId: string;
  args: unknown;
  /** The offer the model named (absent: it named no offered tool, which the gate refuses). */
  offer: OfferedTool | undefined;
  position: number;
  /** The model's id for the call. */
  callId: string;
  /** What the model had read when it wrote the call. */
  seen: ProvenanceView;
  /** Runs the governed call as a subagent (independent tools). */
  delegate?: Delegate;
  /** In an MCP session: the gateway's MAC of the call, which the worker checks before the tool runs. */
  mcpCall?: McpCallProof;
  /** The principal's request declared with this call names the tool (beside the run's own `requested`). */
  requested?: boolean;
}

/** The run's state every governed call of an agent shares. */
export interface AgentCallScope {
  step: StepCtx;
  budget: Budget;
  provenance: Provenance;
}

/** What a governed call comes to: the tool's output, or the refusal the model is told. */
export type AgentCallResult = { output: unknown } | { refused: RefusedToolResult };

/**
 * One governed call of an agent. `reply` (default: the result as it is) turns what the call came to
 * into what the caller wants, in the same step: the call costs the pipeline's promise and one more,
 * however many layers read its result (each promise in the sandbox costs a stack capture on replay).
 */
export function governedAgentCall(scope: AgentCallScope, c: AgentCall): Promise<AgentCallResult>;
export function governedAgentCall<T>(scope: AgentCallScope, c: AgentCall, reply: (r: AgentCallResult) => T): Promise<T>;
export function governedAgentCall<T>(
  scope: AgentCallScope,
  c: AgentCall,
  reply?: (r: AgentCallResult) => T,
): Promise<T | AgentCallResult> {
  const answer = (r: AgentCallResult) => (reply ? reply(r) : r);
  // Anything the call lets out besides a refusal is the caller's.
  const fail = (err: unknown): never => {
    throw err;
  };
  try {
    // The call's own promise resolves to the answer: the pipeline writes it in the call's last step.
    return governed(scope, c, answer, fail) as Promise<T | AgentCallResult>;
  } catch (err) {
    // As a throw in an async function: the caller hears it as the call's rejection.
    return Promise.reject(err).catch((e: unknown) => refusedOr(e, answer, fail));
  }
}

/**
 * The same call, for a caller that waits on the call itself rather than on a promise of its own (a
 * turn's calls in no lane, `runInLanes`): `end` hears the reply, or what the call let out besides a
 * refusal, exactly once. Nothing is thrown, and the call's own promise (left alone) never rejects.
 */
export function governedAgentCallTo<T>(
  scope: AgentCallScope,
  c: AgentCall,
  reply: (r: AgentCallResult) => T,
  end: LaneEnd<T>,
): void {
  const answer = (r: AgentCallResult): void => {
    let value: T;
    try {
      value = reply(r);
    } catch (err) {
      return end.fail(err);
    }
    end.ok(value);
  };
  try {
    void governed(scope, c, answer, (err) => end.fail(err));
  } catch (err) {
    refusedOr(err, answer, (e) => end.fail(e));
  }
}

/** A refusal is an answer (the model is told the rule and the reason); anything else goes to `fail`. */
function refusedOr<A>(err: unknown, answer: (r: AgentCallResult) => A, fail: (err: unknown) => A): A {
  if (!StepError.is(err)) return fail(err);
  return answer({ refused: { error: err.code, rule: err.rule, reason: err.message } });
}

/** The call through StepCtx, its promise resolving to what `answer` or `fail` return (or rejecting with what they throw). */
function governed<A>(
  scope: AgentCallScope,
  c: AgentCall,
  answer: (r: AgentCallResult) => A,
  fail: (err: unknown) => A,
): Promise<unknown> {
  let callTrusted = false;
  let origins: CitedOrigin[] = [];
  const { step } = scope;
  const refused = (err: unknown) => refusedOr(err, answer, fail);
  const landed = (output: unknown) => {
    try {
      produceToolOutput(scope.provenance, {
        toolId: c.toolId,
        output,
        callTrusted,
        origins,
        sensitivity: step.catalog.declared(c.toolId)!.decl.sensitivity.output,
        places: step.catalog.placesOf(c.toolId),
        args: c.args,
      });
    } catch (err) {
      return refused(err);
    }
    return answer({ output });
  };
  const options: CallOptions = {
    position: c.position,
    modelCallId: c.callId,
    answering: c.offer,
    onOrigins: (o) => (origins = o),
    gate: governanceGate({
      principal: step.scope.principal,
      ticket: step.scope.ticket,
      offer: c.offer,
      budget: scope.budget,
      provenance: c.seen,
      onAllowed: (t) => (callTrusted = t),
      requested: c.requested === true || step.scope.requested?.includes(c.toolId) === true,
    }),
  };
  if (c.delegate) options.delegate = c.delegate;
  if (c.mcpCall) options.mcpCall = c.mcpCall;
  return step.callTool(c.toolId, c.args, replyingWith(options, { landed, failed: refused }));
}
