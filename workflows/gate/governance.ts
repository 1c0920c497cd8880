// Workflow-safe: the gates a governed call passes, in order, before it may be scheduled.
import { proxyActivities } from '@temporalio/workflow';
import { permitMac, toolPermit, type RunTicket } from '../../common/ticket';
import { shortDigest } from '../../catalog/digest';
import { pointerCovers } from '../../catalog/json-pointer';
import { paymentOf, type Payment } from '../../catalog/spend';
import type { OfferedTool } from '../../catalog/tool-catalog';
import type { ToolCall } from '../../catalog/tool-call';
import type { CarriedActivities } from '../../common/wire';
import { checkCarried, referencesCarried } from './carried-gate';
import type { Budget } from './limits';
import { outboundOf, type Outbound } from './outbound';
import { leaves } from '../../common/json-leaves';
import type { ProvenanceView } from './provenance';
import type { Gate, GateVerdict } from '../call/gate';
import { checkDataFlow } from './taint-gate';
import { RunFailureType } from '../../catalog/failure-types';

export interface GovernedCall {
  principal: string;
  /** The run's ticket: asking the worker what a call carries presents its MAC for the tool. */
  ticket: RunTicket;
  offer: OfferedTool | undefined;
  budget: Budget;
  /** The labels as of the model's turn: what it had read when it wrote the call. */
  provenance: ProvenanceView;
  /** Receives whether the call's own arguments were all trusted, for the production it makes. */
  onAllowed(callTrusted: boolean): void;
  /** The caller's own rule asks a person about the call too: like `approval: always`, nothing is held meanwhile. */
  asks?: boolean;
  /**
   * The trust rules (protected fields, the taint rule for mutating tools) are waived for this call, at
   * the workflow's request and as the tool's declaration allows; sensitivity, what the call carries,
   * egress, spend and the run's limits still hold.
   */
  waiveTrustRules?: boolean;
}

/** The gates `governanceGate` made: the manifest's own rules, which a call needs no second time. */
const MANIFEST_GATES = new WeakSet<Gate>();

/** Whether a gate is the manifest's (`governanceGate`), as agentRun and the AI SDK tools pass it. */
export function isManifestGate(gate: Gate | undefined): boolean {
  return gate !== undefined && MANIFEST_GATES.has(gate);
}

/** The declaration as the data-flow check reads it when the trust rules are waived. */
function withoutTrustRules(decl: ToolCall['decl']): ToolCall['decl'] {
  return { ...decl, safety: 'read_only', protected_fields: [] };
}

const { resolveCarried } = proxyActivities<CarriedActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3, initialInterval: '200ms', nonRetryableErrorTypes: [RunFailureType.CarriedUnresolved] },
});

type Refusal = Extract<GateVerdict, { allow: false }>;
const refusal = (rule: string, reason: string): Refusal => ({ allow: false, rule, reason });
const messageOf = (err: unknown): string => {
  const e = err as { cause?: { message?: string }; message?: string };
  return e?.cause?.message ?? e?.message ?? String(err);
};

/**
 * Unreachable, limits, credential binding, data flow (arguments, then what the call carries),
 * then egress per destination and spend per payee; a person only where the tool declares it.
 * Nothing is charged here: the verdict's `charge` is called once the call goes ahead.
 */
export function governanceGate(g: GovernedCall): Gate {
  const gate = (call: ToolCall): GateVerdict | Promise<GateVerdict> => {
    const decl = call.decl;
    if (!g.offer)
      return refusal('unreachable', `${call.toolId} is not offered to this run's model (the policy does not allow it)`);
    const limit = g.budget.checkCall(decl, Date.now());
    if (!limit.ok) return refusal(limit.rule, limit.reason);
    if (decl.credential && decl.credential.principal !== 'run' && decl.credential.principal !== g.principal) {
      return refusal(
        'credential',
        `${call.toolId} presents a credential for ${decl.credential.principal}, not for this run's principal ${g.principal}`,
      );
    }
    const askable = decl.approval === 'on_violation' || decl.approval === 'always';
    const flow = checkDataFlow(g.waiveTrustRules ? withoutTrustRules(decl) : decl, call.args, g.provenance);
    if (!flow.allow && !askable) return flow;
    const judged: Judged = {
      // A violation a person may overrule: every hard limit below is still checked first.
      violation: flow.allow ? undefined : flow,
      args: flow.allow ? flow.args : call.args,
      redacted: flow.allow ? [...flow.redacted] : [],
      carriedBytes: 0,
      substitutions: flow.allow ? flow.substitutions : undefined,
      trustedArgs: flow.allow ? flow.trustedArgs : undefined,
    };
    // Only a call that carries something beside its arguments asks the worker: the rest decide at once.
    if (referencesCarried(decl, judged.args)) return withCarried(g, call, judged, askable);
    return conclude(g, call, judged);
  };
  MANIFEST_GATES.add(gate);
  return gate;
}

/** What the data-flow check decided, and what the checks after it read and refine. */
interface Judged {
  violation?: Refusal;
  args: Record<string, unknown>;
  redacted: string[];
  carriedBytes: number;
  substitutions?: { pointer: string; written: string; sent: string }[];
  trustedArgs?: boolean;
}

/** What the call carries beside its arguments, asked of the worker and gated like an argument. */
async function withCarried(g: GovernedCall, call: ToolCall, judged: Judged, askable: boolean): Promise<GateVerdict> {
  let content;
  try {
    content = await resolveCarried({
      toolId: call.toolId,
      args: judged.args,
      principal: g.principal,
      ticket: permitMac(g.ticket, toolPermit(call.toolId)) ?? '',
      digest: shortDigest(call.digest),
    });
  } catch (err) {
    return refusal(
      'carried',
      `what ${call.toolId} would carry beside its arguments could not be resolved, so the call is refused: ${messageOf(err)}`,
    );
  }
  const carried = checkCarried(call.decl, judged.args, content);
  if (!carried.allow && !askable) return carried;
  if (carried.allow) {
    judged.args = carried.args;
    judged.carriedBytes = carried.carriedBytes;
    if (carried.redacted) judged.redacted.push(carried.redacted);
  } else {
    judged.violation ??= carried;
    judged.carriedBytes = content.bytes;
  }
  return conclude(g, call, judged);
}

/** Egress per destination and spend per payee, then the verdict: allowed, or a question for a person. */
function conclude(g: GovernedCall, call: ToolCall, judged: Judged): GateVerdict {
  const decl = call.decl;
  const { args, violation, redacted } = judged;
  let outbound: Outbound;
  let payment: Payment | undefined;
  try {
    outbound = outboundOf(decl, args, judged.carriedBytes);
  } catch (err) {
    return refusal(
      'egress',
      `the destination of ${call.toolId} could not be read, so the call is refused: ${messageOf(err)}`,
    );
  }
  try {
    payment = paymentOf(decl, args);
  } catch (err) {
    return refusal(
      'spend',
      `the payment ${call.toolId} would make could not be read exactly, so the call is refused: ${messageOf(err)}`,
    );
  }
  const leaving = g.budget.checkOutbound(decl, outbound, payment);
  if (!leaving.ok) return refusal(leaving.rule, leaving.reason);
  // A call waiting for a person holds nothing (a denial must cost nothing); one going ahead now is
  // held until the step charges it, so calls running beside it cannot together pass a budget.
  const remaining = g.budget.remaining.bind(g.budget, decl, outbound.destinations);
  if (violation)
    return {
      ...violation,
      askPerson: true,
      charge: g.budget.charger(decl, outbound, payment),
      remaining,
      leaving: { outbound, payment },
    };
  // Read from the labels the data-flow check took (the same as `callTrusted(call.args)`), not a second time.
  const trustedArgs = judged.trustedArgs ?? g.provenance.callTrusted(call.args);
  g.onAllowed(trustedArgs);
  // The tool's receipt may repeat these; that echo is not a foreign source of them.
  g.provenance.noteSent(call.toolId, protectedValues(decl, args));
  const asks = decl.approval === 'always' || g.asks === true;
  const held = asks ? undefined : g.budget.hold(decl, outbound, payment);
  return {
    allow: true,
    args,
    ...(judged.substitutions ? { substitutions: judged.substitutions } : {}),
    charge: held ? held.charge : g.budget.charger(decl, outbound, payment),
    ...(held ? { release: held.release } : {}),
    leaving: { outbound, payment },
    trustedArgs,
    remaining,
    ...(redacted.length
      ? {
          rule: `redaction:${redacted.join(',')}`,
          reason: `redacted ${redacted.join(', ')} to fit ${decl.sensitivity.max}`,
        }
      : {}),
    ...(asks ? { askPerson: true } : {}),
  };
}

function protectedValues(decl: ToolCall['decl'], args: Record<string, unknown>): string[] {
  const rules: string[] = [];
  for (const r of decl.protected_fields) if ('from_sources' in r) rules.push(r.pointer);
  if (rules.length === 0) return [];
  const out: string[] = [];
  for (const l of leaves(args))
    if (typeof l.value === 'string' && rules.some((r) => pointerCovers(r, l.pointer))) out.push(l.value);
  return out;
}
