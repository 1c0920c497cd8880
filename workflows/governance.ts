// Workflow-safe: the gates a governed call passes, in order, before it may be scheduled.
import type { OfferedTool } from '../catalog/tool-catalog';
import type { ToolCall } from '../catalog/tool-call';
import type { Budget } from './limits';
import { leaves, type ProvenanceView } from './provenance';
import type { Gate, GateVerdict } from './step-ctx';
import { checkDataFlow } from './taint-gate';

export interface GovernedCall {
  principal: string;
  offer: OfferedTool | undefined;
  budget: Budget;
  /** The labels as of the model's turn: what it had read when it wrote the call. */
  provenance: ProvenanceView;
  /** Receives whether the call's own arguments were all trusted, for the production it makes. */
  onAllowed(callTrusted: boolean): void;
}

/** Unreachable, limits, credential binding, data flow; a person only where the tool declares it. */
export function governanceGate(g: GovernedCall): Gate {
  return (call: ToolCall): GateVerdict => {
    const decl = call.decl;
    if (!g.offer) return { allow: false, rule: 'unreachable', reason: `${call.toolId} is not offered to this run's model (the policy does not allow it)` };
    const limit = g.budget.checkCall(decl, call.args, Date.now());
    if (!limit.ok) return { allow: false, rule: limit.rule, reason: limit.reason };
    if (decl.credential && decl.credential.principal !== 'run' && decl.credential.principal !== g.principal) {
      return { allow: false, rule: 'credential', reason: `${call.toolId} presents a credential for ${decl.credential.principal}, not for this run's principal ${g.principal}` };
    }
    const flow = checkDataFlow(decl, call.args, g.provenance);
    const askable = decl.approval === 'on_violation' || decl.approval === 'always';
    if (!flow.allow) return askable ? { ...flow, askPerson: true } : flow;
    g.budget.chargeCall(decl, flow.args);
    g.onAllowed(g.provenance.callTrusted(call.args));
    // The tool's receipt may repeat these; that echo is not a foreign source of them.
    g.provenance.noteSent(call.toolId, protectedValues(decl, flow.args));
    return {
      allow: true,
      args: flow.args,
      ...(flow.substitutions ? { substitutions: flow.substitutions } : {}),
      ...(flow.redacted.length ? { rule: `redaction:${flow.redacted.join(',')}`, reason: `redacted ${flow.redacted.join(', ')} to fit ${decl.sensitivity.max}` } : {}),
      ...(decl.approval === 'always' ? { askPerson: true } : {}),
    };
  };
}

/** The string values the call sends in fields a `from_sources` rule satisfied. */
function protectedValues(decl: ToolCall['decl'], args: Record<string, unknown>): string[] {
  const rules = decl.protected_fields.filter((r) => 'from_sources' in r).map((r) => r.pointer);
  return leaves(args)
    .filter((l) => typeof l.value === 'string' && rules.some((r) => l.pointer === r || l.pointer.startsWith(`${r}/`)))
    .map((l) => String(l.value));
}
