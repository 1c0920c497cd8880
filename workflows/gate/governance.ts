// Workflow-safe: the manifest's judgement of one governed call, pure: no Temporal call, no clock but
// the workflow's. It reads the call once, in one direction: who may call (offer, the run's limits,
// the credential), its arguments (data flow), what it carries beside them (handed over as data: the
// pipeline resolves it with the worker), then what leaves (egress per destination, spend per payee,
// the run's budgets, consulted once). A person only where the tool declares it.
import { paymentOf, type Payment } from '../../catalog/spend';
import type { OfferedTool } from '../../catalog/tool-catalog';
import type { ToolCall } from '../../catalog/tool-call';
import type { Leaf } from '../../common/json-leaves';
import type { CanonicalArgs } from '../../common/effect-key';
import type { RunTicket } from '../../common/ticket';
import type { CarriedContent } from '../../common/wire';
import { checkCarried, referencesCarried } from './carried-gate';
import { protectedValues } from './sent-values';
import type { Allowance, Budget } from './limits';
import { outboundAndJson, type Outbound } from './outbound';
import type { ProvenanceView } from './provenance';
import { checkDataFlow, type Substitution } from './taint-gate';
import type { Gate, GateVerdict } from './verdict';

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
  /** The run's request names this tool (it asked for it by name in its grants): see `requires_request`. */
  requested?: boolean;
}

/** What the call carries beside its arguments, as the worker answered: its content, or why it could not say. */
export type CarriedResolution = { content: CarriedContent } | { unresolved: string };

type Refusal = Extract<GateVerdict, { allow: false }>;
const refusal = (rule: string, reason: string): Refusal => ({ allow: false, rule, reason });
const messageOf = (err: unknown): string =>
  (err as { cause?: Error } | undefined)?.cause?.message ?? (err as Error | undefined)?.message ?? String(err);

/** A call admitted on its arguments: what it would send, and what the judgement after reads and refines. */
interface Admitted {
  admitted: true;
  /** A violation a person may overrule: every hard limit after it is still checked first. */
  violation?: Refusal;
  /** The arguments as they would be sent (trusted values of protected fields, redactions). */
  args: Record<string, unknown>;
  redacted: string[];
  /** Bytes carried beside the arguments, counted toward egress. */
  carriedBytes: number;
  substitutions?: Substitution[];
  trustedArgs?: boolean;
  /** The run's budgets for this call, consulted once. */
  allowance: Extract<Allowance, { ok: true }>;
  /** The arguments reference something carried: the judgement asks for it before it concludes. */
  carries: boolean;
  /** The scalars of `args`, when the data-flow check read them as they stand. */
  argLeaves?: readonly Leaf[];
}

/** The declaration as the data-flow check reads it when the trust rules are waived. */
function withoutTrustRules(decl: ToolCall['decl']): ToolCall['decl'] {
  return { ...decl, safety: 'read_only', protected_fields: [] };
}

const askable = (decl: ToolCall['decl']): boolean => decl.approval === 'on_violation' || decl.approval === 'always';

/** Who may call (offer, the run's limits, the credential) and the call's arguments (data flow). */
function admit(g: GovernedCall, call: ToolCall): Admitted | Refusal {
  const decl = call.decl;
  if (!g.offer)
    return refusal('unreachable', `${call.toolId} is not offered to this run's model (the policy does not allow it)`);
  const allowance = g.budget.consult(decl, Date.now());
  if (!allowance.ok) return refusal(allowance.rule, allowance.reason);
  if (decl.credential && decl.credential.principal !== 'run' && decl.credential.principal !== g.principal) {
    return refusal(
      'credential',
      `${call.toolId} presents a credential for ${decl.credential.principal}, not for this run's principal ${g.principal}`,
    );
  }
  const asks = askable(decl);
  const flow = checkDataFlow(g.waiveTrustRules ? withoutTrustRules(decl) : decl, call.args, g.provenance, asks);
  if (!flow.allow && !asks) return flow;
  const { args = call.args, substitutions } = flow;
  // Only a call that carries something beside its arguments asks the worker: the rest decide at once.
  const carries = referencesCarried(decl, args);
  if (!flow.allow)
    return { admitted: true, violation: flow, args, substitutions, redacted: [], carriedBytes: 0, allowance, carries };
  return {
    admitted: true,
    args,
    redacted: flow.redacted,
    carriedBytes: 0,
    substitutions,
    trustedArgs: flow.trustedArgs,
    argLeaves: flow.args === call.args ? flow.leaves : undefined,
    allowance,
    carries,
  };
}

/** What the call carries, gated like an argument: the admission refined, or a refusal. */
function withCarried(call: ToolCall, a: Admitted, carried: CarriedResolution | undefined): Admitted | Refusal {
  if (!carried) return a;
  if ('unresolved' in carried)
    return refusal(
      'carried',
      `what ${call.toolId} would carry beside its arguments could not be resolved, so the call is refused: ${carried.unresolved}`,
    );
  const { content } = carried;
  const checked = checkCarried(call.decl, a.args, content);
  if (!checked.allow && !askable(call.decl)) return checked;
  if (!checked.allow) return { ...a, violation: a.violation ?? checked, carriedBytes: content.bytes };
  return {
    ...a,
    args: checked.args,
    argLeaves: checked.args === a.args ? a.argLeaves : undefined,
    carriedBytes: checked.carriedBytes,
    redacted: checked.redacted ? [...a.redacted, checked.redacted] : a.redacted,
  };
}

/** What leaves: the destinations and bytes (arguments and what is carried), and the payment. */
function leavingOf(call: ToolCall, args: Record<string, unknown>, carriedBytes: number) {
  let outbound: Outbound;
  let written: CanonicalArgs;
  let payment: Payment | undefined;
  try {
    ({ outbound, written } = outboundAndJson(call.decl, args, carriedBytes));
  } catch (err) {
    return refusal(
      'egress',
      `the destination of ${call.toolId} could not be read, so the call is refused: ${messageOf(err)}`,
    );
  }
  try {
    payment = paymentOf(call.decl, args);
  } catch (err) {
    return refusal(
      'spend',
      `the payment ${call.toolId} would make could not be read exactly, so the call is refused: ${messageOf(err)}`,
    );
  }
  return { outbound, payment, written };
}

/**
 * The verdict on an admitted call, given what it carries (absent: it carries nothing): egress per
 * destination and spend per payee against the run's budgets, then allowed, or a question for a person.
 * Nothing is charged here: the verdict's `charge` is called once the call goes ahead.
 */
function conclude(g: GovernedCall, call: ToolCall, admitted: Admitted, carried?: CarriedResolution): GateVerdict {
  const a = withCarried(call, admitted, carried);
  if (!('admitted' in a)) return a;
  const decl = call.decl;
  const leaving = leavingOf(call, a.args, a.carriedBytes);
  if ('allow' in leaving) return leaving;
  const { outbound, payment, written } = leaving;
  const asks = !a.violation && (decl.approval === 'always' || g.asks === true);
  const unasked = !a.violation && unrequested(g, call, written);
  // A call waiting for a person holds nothing (a denial must cost nothing); one going ahead now is
  // held until the step charges it, so calls running beside it cannot together pass a budget.
  const cost = a.allowance.leave(outbound, payment, !a.violation && !asks && !unasked);
  if (!cost.ok) return refusal(cost.rule, cost.reason);
  if (unasked) return unasked;
  const charged = { charge: cost.charge, remaining: cost.remaining, leaving: { outbound, payment }, written };
  // A person may let it through: then it goes out as admitted (trusted values, redactions), as an allowed call would.
  if (a.violation)
    return {
      ...a.violation,
      askPerson: true,
      args: a.args,
      ...(a.substitutions ? { substitutions: a.substitutions } : {}),
      ...charged,
    };
  // Read from the labels the data-flow check took (the same as `callTrusted(call.args)`), not a second time.
  const trustedArgs = a.trustedArgs ?? g.provenance.callTrusted(call.args);
  g.onAllowed(trustedArgs);
  // The tool's receipt may repeat these; that echo is not a foreign source of them.
  g.provenance.noteSent(call.toolId, protectedValues(decl, a.args, a.argLeaves));
  // Written field by field, in the order the verdict always had, rather than spread from parts.
  const allowed: GateVerdict = { allow: true, args: a.args };
  if (a.substitutions) allowed.substitutions = a.substitutions;
  allowed.charge = charged.charge;
  allowed.remaining = charged.remaining;
  allowed.leaving = charged.leaving;
  allowed.written = charged.written;
  if (cost.release) allowed.release = cost.release;
  allowed.trustedArgs = trustedArgs;
  if (a.redacted.length) {
    allowed.rule = `redaction:${a.redacted.join(',')}`;
    allowed.reason = `redacted ${a.redacted.join(', ')} to fit ${decl.sensitivity.max}`;
  }
  if (asks) allowed.askPerson = true;
  return allowed;
}

/**
 * A tool that `requires_request`, called by a run whose request does not name it: refused unless its
 * principal says yes to this very call (the tool and its canonical arguments), once everything else
 * admits it. Their yes is kept in the run's provenance as an action token no argument can equal.
 */
function unrequested(g: GovernedCall, call: ToolCall, written: CanonicalArgs): Refusal | undefined {
  if (call.decl.requires_request !== true || g.requested === true) return undefined;
  const action = `\u0000action ${call.toolId} ${written.json}`;
  if (g.provenance.confirmed(action)) return undefined;
  const origin = `the run's request does not name ${call.toolId}: the action itself must be asked for`;
  return {
    ...refusal('requires_request', `${origin}, and its principal did not confirm this call`),
    confirm: { pointer: '', value: call.toolId, origin, accept: () => g.provenance.confirm(action) },
  };
}

/** A call that carries something beside its arguments: what to resolve it from, and the rest of the judgement. */
export interface CarriedQuestion {
  /** The arguments as the gate admitted them (trusted values of protected fields, redactions applied). */
  carriedArgs: Record<string, unknown>;
  /** The verdict, given the worker's answer. */
  answer(carried: CarriedResolution): GateVerdict;
}

export const isCarriedQuestion = (j: GateVerdict | CarriedQuestion): j is CarriedQuestion => 'answer' in j;

/**
 * The manifest's judgement of a call, in one pass: its verdict, or, for a call that carries something
 * and was admitted on its arguments, the one question the pipeline must ask the worker first.
 */
export function judge(g: GovernedCall, call: ToolCall): GateVerdict | CarriedQuestion {
  const a = admit(g, call);
  if (!('admitted' in a)) return a;
  if (!a.carries) return conclude(g, call, a);
  return { carriedArgs: a.args, answer: (carried) => conclude(g, call, a, carried) };
}

/**
 * A class whose constructor returns the object it is handed: a subclass's private field then brands
 * that object, a gate function here.
 */
class Returning {
  constructor(target: object) {
    return target;
  }
}

/**
 * The gates `governanceGate` made, with the call each judges: the manifest's own rules. A private
 * field branded on the gate, which only this class can write or read (a map of weak references
 * cost a tenth of the judgement: one gate is made for every call agentRun makes).
 */
class ManifestGate extends Returning {
  readonly #governed: GovernedCall;

  private constructor(gate: Gate, g: GovernedCall) {
    super(gate);
    this.#governed = g;
  }

  static brand(gate: Gate, g: GovernedCall): Gate {
    new ManifestGate(gate, g);
    return gate;
  }

  static of(gate: Gate): GovernedCall | undefined {
    return #governed in gate ? (gate as unknown as ManifestGate).#governed : undefined;
  }
}

/**
 * The manifest's rules as a gate, for `StepCtx.callTool` (agentRun, the AI SDK tools): the pipeline
 * recognises it (`governedBy`) and judges the call itself, resolving what it carries first. Called
 * directly, it judges a call that carries nothing; one that carries something is refused (`carried`).
 */
export function governanceGate(g: GovernedCall): Gate {
  // Bound, not an arrow function: one is made for every call agentRun makes.
  return ManifestGate.brand(judgeAtOnce.bind(undefined, g), g);
}

function judgeAtOnce(g: GovernedCall, call: ToolCall): GateVerdict {
  const judged = judge(g, call);
  if (!isCarriedQuestion(judged)) return judged;
  return judged.answer({ unresolved: 'only the call pipeline asks the worker what a call carries' });
}

/** The call a manifest gate (`governanceGate`) judges, or undefined for any other gate. */
export function governedBy(gate: Gate | undefined): GovernedCall | undefined {
  return typeof gate === 'function' ? ManifestGate.of(gate) : undefined;
}
