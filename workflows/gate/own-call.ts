// Workflow-safe: what a workflow's own call adds around the manifest's rules. Its own gate speaks
// first and may only refuse or ask a person, never change what is sent; `acceptUntrusted` says why
// and holds only where the tool's declaration allows it. The manifest's verdict then stands, with
// the workflow's question where the manifest raised none.
import type { ToolCall } from '../../catalog/tool-call';
import type { GovernedCall } from './governance';
import type { GateVerdict } from './verdict';

/** How the manifest judges a call the pipeline runs (a workflow's own, or agentRun's). */
export interface Governance {
  /** The manifest's view of this call, taken when it is judged; `asks`: the workflow's own gate asks a person too. */
  governed(call: ToolCall, asks: boolean): GovernedCall;
  /** The trust rules waived for this call at the workflow's request, saying why. */
  acceptUntrusted?: { reason: string };
}

type Refusal = Extract<GateVerdict, { allow: false }>;
const refusal = (rule: string, reason: string): Refusal => ({ allow: false, rule, reason });

/** A request to accept untrusted data that gives no reason, or for a tool that does not allow it, is refused first. */
export function refuseAcceptUntrusted(call: ToolCall, accepting: { reason: string } | undefined): Refusal | undefined {
  if (accepting === undefined) return undefined;
  if (typeof accepting?.reason !== 'string' || accepting.reason.trim() === '')
    return refusal('accept_untrusted', `a call that accepts untrusted data says why (acceptUntrusted.reason)`);
  if (call.decl.accepts_untrusted_on_request !== true)
    return refusal(
      'accept_untrusted',
      `${call.toolId} takes no untrusted data on a workflow's request: the worker's manifest does not declare accepts_untrusted_on_request for it`,
    );
  return undefined;
}

/**
 * The workflow's own verdict where it ends the call: its refusal, or a refusal because it changed the
 * arguments. A refusal a person may overrule does not end it: the manifest judges the call, and a
 * person is asked only where its rules let the call through (a hard limit is not approved past).
 */
export function ownVerdictFirst(call: ToolCall, mine: GateVerdict | undefined): GateVerdict | undefined {
  if (mine && !mine.allow && !mine.askPerson) return mine;
  if (mine?.args)
    return refusal(
      'gate',
      `the workflow's own gate replaced the arguments of ${call.toolId}; on a governed call it may refuse or ask a person, not change what is sent (pass the changed arguments instead)`,
    );
  return undefined;
}

/** The manifest's verdict with the workflow's question (where the manifest raised none) and its acceptUntrusted. */
export function withOwn(m: GateVerdict, mine: GateVerdict | undefined, accepting?: { reason: string }): GateVerdict {
  if (!m.allow && !m.askPerson) return m;
  const accepted = accepting ? { acceptedUntrusted: { reason: accepting.reason } } : {};
  if (m.allow && mine?.askPerson)
    return {
      ...m,
      ...accepted,
      askPerson: true,
      ...(mine.rule !== undefined ? { rule: mine.rule } : {}),
      ...(mine.reason !== undefined ? { reason: mine.reason } : {}),
      ...(mine.deadline !== undefined ? { deadline: mine.deadline } : {}),
    };
  return { ...m, ...accepted };
}
