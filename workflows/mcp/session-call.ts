// Workflow-safe: one `tools/call` of an MCP session. The key's first request reserves the call's
// position and runs it through agentRun's governed call (the manifest's gate over what the client had
// read); every request for the key answers the call's one outcome, or `waiting` while a person decides.
import { ApplicationFailure, condition, patched } from '@temporalio/workflow';
import { ErrorCode, StepErrorCode } from '../../catalog/error-codes';
import { ALLOW_ALL } from '../../catalog/policy';
import { requestedTools } from '../../common/declared-request';
import type { McpCallOutcome, McpCallRequest } from '../../common/gateway-protocol';
import { Patch } from '../../common/names';
import { callSubject, type McpCallProof } from '../../common/session-proof';
import { governedAgentCall, type AgentCallScope } from '../agent/governed-call';
import type { PendingEscalation } from '../escalation';
import { type CallMemo, type MemoSlot } from './call-memo';
import { answerAsRepeat, repeatedCall } from './same-call';
import type { SessionProvenance } from './session-provenance';

/** The step codes that mean the call was refused (nothing sent); any other is a failure. */
const REFUSALS: readonly string[] = [
  StepErrorCode.Unreachable,
  StepErrorCode.InvalidArguments,
  StepErrorCode.Refused,
  StepErrorCode.LimitExceeded,
  StepErrorCode.LeaseMissing,
];

/** The session's state every call shares. */
export interface SessionCalls extends AgentCallScope {
  memo: CallMemo;
  seen: SessionProvenance;
  /** Calls this run started (for the test-only continue-as-new knob). */
  started: number;
}

/** Why a request cannot be read as a call, or `undefined`. */
export function malformedCall(req: unknown): string | undefined {
  if (typeof req !== 'object' || req === null) return 'the request is not an object';
  const r = req as Partial<Record<keyof McpCallRequest, unknown>>;
  for (const field of ['key', 'toolId'] as const)
    if (typeof r[field] !== 'string' || r[field].length === 0)
      return `the request's ${field} must be a non-empty string`;
  // A call carries the gateway's signature (or, from a gateway before signed calls, its MAC).
  const proven = (v: unknown) => typeof v === 'string' && v.length > 0;
  if (!proven(r.sig) && !proven(r.mac)) return "the request's sig must be a non-empty string";
  if (!('args' in r)) return 'the request carries no args (send {} for a tool that takes none)';
  return undefined;
}

/** Refuses a request the session cannot read: the update fails, typed, and nothing is started. */
export function refuseMalformed(req: unknown): void {
  const problem = malformedCall(req);
  if (problem) throw ApplicationFailure.nonRetryable(`MCP call refused: ${problem}`, ErrorCode.McpCallInvalid);
}

/** What the worker checks the call by: the gateway's signature and the digests it covers. */
function proofOf(req: McpCallRequest): McpCallProof {
  if (req.sig === undefined || req.issuedAt === undefined)
    return { key: req.key, ...(req.mac ? { mac: req.mac } : {}) };
  const { argsDigest, givenDigest } = callSubject(req, req.issuedAt);
  return { key: req.key, sig: req.sig, issuedAt: req.issuedAt, argsDigest, givenDigest };
}

/** Who may decide a waiting call, as the client is told. */
function approversOf(s: SessionCalls, toolId: string): string {
  const principal = s.step.scope.principal;
  return s.step.scope.verifiesDecisions
    ? `an approver the manifest declares for ${toolId}, with a verified credential (not ${principal} unless the manifest allows own_run)`
    : `anyone the worker lets decide this run's calls (it verifies no approver credentials)`;
}

function waitingOf(s: SessionCalls, slot: MemoSlot): PendingEscalation | undefined {
  return slot.position === undefined ? undefined : s.step.waitingOn().find((p) => p.position === slot.position);
}

/** The call's outcome, or `waiting` as soon as it waits for a person. */
async function answerOf(s: SessionCalls, slot: MemoSlot): Promise<McpCallOutcome> {
  await condition(() => slot.entry.outcome !== undefined || waitingOf(s, slot) !== undefined);
  if (slot.entry.outcome) return slot.entry.outcome;
  const p = waitingOf(s, slot)!;
  const asksPrincipal = p.kind === 'confirmation' && p.field !== undefined;
  return {
    status: 'waiting',
    effectKey: p.effectKey,
    reason: p.reason,
    approvers: asksPrincipal
      ? `${s.step.scope.principal}, the session's own principal`
      : approversOf(s, slot.entry.toolId),
    ...(asksPrincipal ? { question: p.field } : {}),
    ...(slot.entry.sameAs !== undefined ? { sameCallAs: slot.entry.sameAs } : {}),
  };
}

/** Runs the call through the governed pipeline and settles its slot; never throws. */
async function perform(s: SessionCalls, slot: MemoSlot, req: McpCallRequest): Promise<void> {
  const position = slot.position!;
  const effectKey = () => s.step.journal.find((e) => e.position === position)?.effectKey;
  let outcome: McpCallOutcome;
  try {
    const r = await governedAgentCall(s, {
      toolId: req.toolId,
      args: req.args,
      offer: s.step.catalog.offered(ALLOW_ALL).find((o) => o.toolId === req.toolId),
      position,
      // The host named this action in the request it declared with the call (signed with it, as `given` is).
      requested: requestedTools(req.given).includes(req.toolId) && patched(Patch.DeclaredRequestNamesTools),
      callId: req.key,
      seen: s.seen.seenBy(req.args),
      mcpCall: proofOf(req),
    });
    const key = effectKey();
    if ('output' in r) {
      s.seen.returned();
      outcome = { status: 'completed', output: r.output, effectKey: key ?? '' };
    } else if (REFUSALS.includes(r.refused.error)) {
      const { error: code, rule, reason } = r.refused;
      outcome = { status: 'refused', code, reason, ...(rule ? { rule } : {}), ...(key ? { effectKey: key } : {}) };
    } else {
      outcome = {
        status: 'failed',
        code: r.refused.error,
        message: r.refused.reason,
        ...(key ? { effectKey: key } : {}),
      };
    }
  } catch (err) {
    const key = effectKey();
    const message = err instanceof Error ? err.message : String(err);
    outcome = { status: 'failed', code: StepErrorCode.Failed, message, ...(key ? { effectKey: key } : {}) };
  }
  slot.entry.settledAt = Date.now();
  slot.entry.outcome = outcome;
  if (outcome.effectKey) slot.entry.effectKey = outcome.effectKey;
}

/**
 * Answers one request: a new key starts its call, a known key answers the call's outcome, and a new
 * keyless request that repeats an earlier call (same-call.ts) answers that call's outcome.
 */
export function handleCall(s: SessionCalls, req: McpCallRequest): Promise<McpCallOutcome> | McpCallOutcome {
  const found = s.memo.lookup(req);
  if (found.kind === 'answered') return found.outcome;
  if (found.kind === 'known') return answerOf(s, found.slot);
  if (req.given !== undefined) s.seen.declare(req.given);
  const first = repeatedCall(s.memo, req, s.step.catalog.declared(req.toolId)?.decl, Date.now());
  if (first) return answerOf(s, answerAsRepeat(s.memo, req, first));
  const slot = s.memo.open(req, s.step.reserve(1));
  s.started++;
  void perform(s, slot, req);
  return answerOf(s, slot);
}
