// Workflow-safe: the manifest's rules on a workflow's own calls. `StepCtx.callTool` judges every call
// no agent gate decides with the gate agentRun uses (`governanceGate`), over the run's own labels:
// each call's output enters them as the tool's untrusted data with its output sensitivity, as in agentRun.
//
// Who wrote an argument. Workflow code is no model that has read everything: what it writes is not
// tainted by what it read. So a value is labelled by equality after normalisation (case, whitespace,
// NFKC, as a model's copies are): a value a tool returned in this run carries that tool's labels
// (untrusted, its output sensitivity); a value no tool returned is the workflow's own, labelled as the
// principal's words (`user://prompt`, trusted), as agentRun labels its prompt. What the principal gave
// the run (`StepCtx.open({ given })`) and a single-token value the workflow sent before any tool
// returned it are productions of `user://prompt` too, so a tool repeating them taints nothing. A protected
// field is satisfied as in agentRun: every source of the value must be allowed, and an allowed tool's
// call must itself have been trusted. A value the workflow derived from a tool result beyond what
// normalisation undoes is the workflow vouching for it: the code is the deployer's.
import type { RunCaps } from '../../catalog/caps';
import type { Sensitivity } from '../../catalog/manifest';
import { sensitivityRank } from '../../catalog/sensitivity';
import { canUseTool, type Policy } from '../../catalog/policy';
import type { OfferedTool, ToolCatalog } from '../../catalog/tool-catalog';
import { offerName } from '../../catalog/tool-id';
import { leaves } from '../../common/json-leaves';
import type { RunTicket } from '../../common/ticket';
import type { CitedOrigin } from '../../common/wire';
import type { Governance } from './own-call';
import { Budget, type Usage } from './limits';
import {
  Provenance,
  USER_PROMPT,
  type Label,
  type ProvenanceState,
  type ProvenanceView,
  type Sighting,
} from './provenance';
import { tokens } from './tokens';
import { produceToolOutput } from './tool-output-labels';
import type { ResultPlace } from '../../catalog/result-place';

/** What a run that continues as new picks up of its workflow's governed calls. */
export interface RunGovernanceState {
  provenance: ProvenanceState;
  usage: Usage;
  startedAt: number;
  sensitivity: Sensitivity;
}

/** Who the calls are for, as the worker established it. */
export interface GovernedScope {
  catalog: ToolCatalog;
  principal: string;
  ticket: RunTicket;
  policy: Policy;
  /** The granted tools the run's request names (`RunScope.requested`). */
  requested?: readonly string[];
}

/** How one workflow call asks to be judged. */
export interface OwnCall {
  acceptUntrusted?: { reason: string };
  /** Receives whether the call's own arguments were all trusted. */
  onAllowed(callTrusted: boolean): void;
  /**
   * A phrase the workflow wrote from words a tool returned is judged as no source's (the run's
   * history decides: asked only when such a phrase meets a rule); else it is the workflow's own words.
   */
  phrasesJudged?: () => boolean;
  /** The arguments are a model's (`CallOptions.fromModel`): judged on the run's labels alone. */
  fromModel?: boolean;
}

/** The labels as a workflow's own call reads them: a value no tool returned is the workflow's own words. */
function workflowView(base: ProvenanceView, own: Label, phrasesJudged?: () => boolean): ProvenanceView {
  const ownSighting = (value: string | number): Sighting => ({
    source: USER_PROMPT,
    trusted: true,
    callTrusted: true,
    sensitivity: own.sensitivity,
    exact: String(value),
    seq: -1,
    echo: false,
  });
  // A value a tool returned has its labels; a phrase the workflow wrote has those of every word in it a
  // tool returned (a summary of the transactions is as sensitive, and as untrusted, as they are).
  const labelOf: ProvenanceView['labelOf'] = (value) => {
    if (value === null || typeof value === 'boolean') return own;
    if (base.productionsOf(value).length > 0) return base.labelOf(value);
    if (typeof value === 'number') return own;
    let label = own;
    for (const word of tokens(value))
      if (word !== value && base.productionsOf(word).length > 0) label = joined(label, base.labelOf(word));
    return label;
  };
  return {
    productionsOf: (value) => {
      const seen = base.productionsOf(value);
      if (seen.length > 0) return seen;
      // A phrase of a tool's words (a hotel named in a review) is the tool's data, retyped: nobody's own.
      if (typeof value === 'string' && ofResultWords(base, value) && phrasesJudged?.() === true) return seen;
      return [ownSighting(value)];
    },
    contextLabel: () => own,
    labelOf,
    callTrusted: (args) => leaves(args).every((l) => labelOf(l.value).trusted),
    noteSent: (source, values) => base.noteSent(source, values),
    userSpan: (text) => base.userSpan(text),
    confirmed: (value) => base.confirmed(value),
    confirm: (value) => base.confirm(value),
  };
}

/** A phrase some of whose words a tool returned. */
function ofResultWords(base: ProvenanceView, value: string): boolean {
  for (const word of tokens(value)) if (word !== value && base.productionsOf(word).length > 0) return true;
  return false;
}

/** The label of a phrase made of words with these labels: every source, trusted only if all are, the highest sensitivity. */
function joined(a: Label, b: Label): Label {
  return {
    sources: [...new Set([...a.sources, ...b.sources])].sort(),
    trusted: a.trusted && b.trusted,
    sensitivity: sensitivityRank(b.sensitivity) > sensitivityRank(a.sensitivity) ? b.sensitivity : a.sensitivity,
    synthesized: false,
  };
}

export class RunGovernance {
  private readonly own: Label;
  private readonly offers = new Map<string, OfferedTool | undefined>();

  private constructor(
    private readonly provenance: Provenance,
    readonly budget: Budget,
    readonly startedAt: number,
    private readonly sensitivity: Sensitivity,
  ) {
    this.own = Object.freeze({ sources: [USER_PROMPT], trusted: true, sensitivity, synthesized: false });
  }

  /** The run's governance from its start: `given` is what the principal gave it, their own words. */
  static start(o: { given?: unknown; sensitivity?: Sensitivity; caps?: RunCaps; startedAt: number }): RunGovernance {
    const sensitivity = o.sensitivity ?? 'internal';
    const provenance = new Provenance();
    if (o.given !== undefined)
      provenance.produce(o.given, { source: USER_PROMPT, trusted: true, callTrusted: true, sensitivity });
    return new RunGovernance(provenance, new Budget({}, o.startedAt, 0, undefined, o.caps), o.startedAt, sensitivity);
  }

  /** The governance of the run this one continues: its labels, what it spent, when it started. */
  static restore(state: RunGovernanceState, caps?: RunCaps): RunGovernance {
    return new RunGovernance(
      Provenance.restore(state.provenance),
      new Budget({}, state.startedAt, 0, state.usage, caps),
      state.startedAt,
      state.sensitivity,
    );
  }

  state(): RunGovernanceState {
    return {
      provenance: this.provenance.state(),
      usage: this.budget.usage,
      startedAt: this.startedAt,
      sensitivity: this.sensitivity,
    };
  }

  /** The tool as the run's policy offers it, or undefined: the manifest gate refuses a tool the policy hides. */
  private offerOf(scope: GovernedScope, toolId: string): OfferedTool | undefined {
    if (this.offers.has(toolId)) return this.offers.get(toolId);
    const entry = scope.catalog.granted(toolId);
    const offer =
      entry && canUseTool(scope.policy, toolId)
        ? {
            toolId,
            name: offerName(toolId),
            description: entry.decl.description,
            inputSchema: entry.decl.input_schema,
          }
        : undefined;
    this.offers.set(toolId, offer);
    return offer;
  }

  /**
   * How the manifest judges one workflow call (after its own gate, which the pipeline asks first):
   * every rule the manifest declares for the tool, on the arguments as written, over the run's labels
   * as they stand when the call is judged.
   */
  governance(scope: GovernedScope, c: OwnCall): Governance {
    return {
      ...(c.acceptUntrusted !== undefined ? { acceptUntrusted: c.acceptUntrusted } : {}),
      governed: (call, asks) => {
        const base = this.provenance.snapshot();
        return {
          principal: scope.principal,
          ticket: scope.ticket,
          offer: this.offerOf(scope, call.toolId),
          budget: this.budget,
          provenance: c.fromModel ? base : workflowView(base, this.own, c.phrasesJudged),
          onAllowed: (trusted) => {
            if (!c.fromModel) this.ownWords(base, call.args);
            c.onAllowed(trusted);
          },
          asks,
          waiveTrustRules: c.acceptUntrusted !== undefined,
          requested: scope.requested?.includes(call.toolId) === true,
        };
      },
    };
  }

  /**
   * The workflow's own single-token values no tool had returned: productions of the principal's words,
   * so a tool echoing them (a record looked up by the id the workflow sent) taints nothing. Phrases are
   * left out: their words would vouch for values a tool returned.
   */
  private ownWords(seen: ProvenanceView, args: Record<string, unknown>): void {
    const own: (string | number)[] = [];
    for (const l of leaves(args)) {
      const word = typeof l.value === 'number' || (typeof l.value === 'string' && tokens(l.value).length === 1);
      if (word && seen.productionsOf(l.value as string | number).length === 0) own.push(l.value as string | number);
    }
    if (own.length > 0)
      this.provenance.produce(own, {
        source: USER_PROMPT,
        trusted: true,
        callTrusted: true,
        sensitivity: this.sensitivity,
      });
  }

  /** A call's output enters the run's labels as the tool's untrusted data, as in agentRun. */
  produced(call: {
    toolId: string;
    output: unknown;
    callTrusted: boolean;
    origins: readonly CitedOrigin[];
    sensitivity: Sensitivity;
    places?: readonly ResultPlace[];
    args?: unknown;
  }): void {
    produceToolOutput(this.provenance, call);
  }
}
