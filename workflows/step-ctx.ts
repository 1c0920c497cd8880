// Workflow-safe: the one door through which workflow code reaches a tool. A call passes, in order:
// prepare → gate → approval → lease → perform (see workflows/call/).
import type { SearchAttributePair } from '@temporalio/common';
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  ContinueAsNew,
  isCancellation,
  proxyLocalActivities,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type {
  AuthorizeActivities,
  AuthorizeRequest,
  CarriedAuthority,
  CitedOrigin,
  DecisionActivities,
} from '../common/wire';
import type { RunIdentity, RunTicket, TicketCarry } from '../common/ticket';
import type { RunCaps } from '../catalog/caps';
import type { Sensitivity } from '../catalog/manifest';
import { CatalogErrorCode } from '../catalog/errors';
import { MANIFEST_DIGEST, PRINCIPAL } from '../common/search-attributes';
import { ALLOW_ALL, type Policy } from '../catalog/policy';
import { ToolCatalog } from '../catalog/tool-catalog';
import {
  DECISION_REJECTED,
  DecisionRejectedReason,
  DECISIONS,
  pendingEscalations,
  resolveEscalation,
  type EscalationDecision,
  type PendingEscalation,
} from './escalation';
import { runCall, type CallHost, type CallOptions } from './call/pipeline';
import { isManifestGate } from './gate/governance';
import { RunGovernance, type RunGovernanceState } from './gate/run-governance';
import { journalQuery } from './journal-query';
import type { JournalEntry, LeaseState } from '../common/journal';
import type { Escalator } from './recovery';
import { failureMessage, readableTime, RunStatusBoard } from './run-status';
import { recordRefusal } from './run-span';
import { RunStream, type RunStreamState } from './run-stream';
import { RunFailureType } from '../catalog/failure-types';

export type { Gate, GateVerdict } from './call/gate';
export type { Delegate } from './call/perform';
export type { CallOptions } from './call/pipeline';

export interface RunScope {
  catalog: ToolCatalog;
  principal: string;
  /** Who the run acts for, as the worker established it (its verified subject and groups). */
  identity: RunIdentity;
  /** The worker's ticket: every call presents its MAC for the tool. */
  ticket: RunTicket;
  grants: readonly string[];
  policy: Policy;
  /** Capabilities the worker granted the run, such as the extension-runtime lease. */
  capabilities?: readonly string[];
  /** The digest of the manifest the worker governs this run by. */
  manifestDigest?: string;
  /** The worker verifies who decides this run's waiting calls (`authorizeDecision`); else `by` is taken as given. */
  verifiesDecisions?: boolean;
  /**
   * The worker's caps on this run (turns, tool calls, tokens, cost, deadline, delegation depth), from
   * its manifest's `limits` and the principal's entry; absent when it caps nothing. A run's own limits
   * only tighten them: `agentRun` and `governedTools` budget within them, and a workflow of one's own
   * that counts its own work reads them here.
   */
  caps?: RunCaps;
}

/** A lease and its lifecycle so far. */
export interface LeaseRecord {
  id: string;
  states: LeaseState[];
}

/** Where a run stands between turns: what the run that continues it picks up. */
export interface StepState {
  position: number;
  /** Leases not yet released. */
  leases: LeaseRecord[];
  /** Calls refused or denied so far, over the whole chain (the run's ToolplaneRefusals). */
  refusals?: number;
  /** The labels and usage of the workflow's own governed calls, once it made one. */
  governance?: RunGovernanceState;
}

/** What a workflow asks for when it opens a StepCtx; the worker decides what it gets. */
export interface OpenRequest extends Omit<AuthorizeRequest, 'carried'> {
  /** Which granted tools the run's model may see (default: all). */
  policy?: Policy;
  /**
   * Instead of a credential: the ticket (`step.carry()`) of the run this one continues as new, or of the
   * parent that delegates to it. The worker checks it against the ids Temporal gave this run.
   */
  carry?: TicketCarry;
  /** The stream state the run this one continues handed over (`RunStream.handOver`). */
  stream?: RunStreamState;
  /**
   * What the principal gave this run, typically the workflow's input: the principal's own words
   * (`user://prompt`, trusted), as agentRun's prompt is. A value in it that a tool also returns stays
   * the principal's (an address the user named that the inbox also holds), and satisfies a protected
   * field that allows `user://prompt`. Never a tool's output: that would vouch for it.
   */
  given?: unknown;
  /** How sensitive `given`, and the values the workflow writes itself, are (default internal, as a prompt). */
  givenSensitivity?: Sensitivity;
}

/** Whose ticket a run carries: the run it continues, else its parent. */
function carriedFrom(carry: TicketCarry): CarriedAuthority {
  const info = workflowInfo();
  if (info.continuedFromExecutionRunId)
    return { from: 'continued', workflowId: info.workflowId, runId: info.continuedFromExecutionRunId, carry };
  return { from: 'parent', workflowId: info.parent?.workflowId ?? '', runId: info.parent?.runId ?? '', carry };
}

/** The failure type of a run whose credential (or carried ticket) the worker refused. */
export const IDENTITY_REFUSED = RunFailureType.IdentityRefused;

/** The worker answers on the worker running the workflow task: no round trip before the first call. */
const { authorizeRun } = proxyLocalActivities<AuthorizeActivities>({
  startToCloseTimeout: '30s',
  retry: {
    maximumAttempts: 5,
    nonRetryableErrorTypes: [CatalogErrorCode.RunRefused, CatalogErrorCode.ModelRefused, IDENTITY_REFUSED],
  },
});

/** The worker says who decides a waiting call, on the worker running the run: only it can ask. */
const { authorizeDecision } = proxyLocalActivities<DecisionActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: [IDENTITY_REFUSED] },
});

/** How the worker's refusal of an approver (an IdentityRefused reason) reads to whoever sent the decision; any other is a bad credential. */
const REJECTED_FOR: Readonly<Record<string, DecisionRejectedReason>> = {
  missing: DecisionRejectedReason.NoCredential,
  not_an_approver: DecisionRejectedReason.NotAnApprover,
  own_run: DecisionRejectedReason.OwnRun,
  principal_mismatch: DecisionRejectedReason.ByMismatch,
  asserted: DecisionRejectedReason.Unavailable,
  replayed: DecisionRejectedReason.Replayed,
};

function rejectDecision(reason: DecisionRejectedReason, message: string): never {
  throw ApplicationFailure.nonRetryable(message, DECISION_REJECTED, { reason });
}

/**
 * Labels the run with the principal the worker established (verified, or asserted where the worker
 * allows it) and the manifest it is governed by: the ToolplanePrincipal every run that opened a StepCtx
 * carries, whatever its workflow type, and which `toolplane list` selects by. Written by the run, never
 * taken from the client that started it: a run the worker refused carries the principal it asked for,
 * or `unverified:<name>` when its identity was refused. Upserted only where the run does not already
 * carry these values (a continued chain), so such a run spends no event on it.
 */
function labelRun(principal: string, manifestDigest: string | undefined): void {
  const carried = workflowInfo().typedSearchAttributes;
  const changed: SearchAttributePair[] = [];
  if (carried.get(PRINCIPAL) !== principal) changed.push({ key: PRINCIPAL, value: principal });
  if (manifestDigest && carried.get(MANIFEST_DIGEST) !== manifestDigest)
    changed.push({ key: MANIFEST_DIGEST, value: manifestDigest });
  if (changed.length > 0) upsertSearchAttributes(changed);
}

/** As long as the Summary `startAgentRun` gives a run. */
const SUMMARY_CHARS = 200;

export class StepCtx {
  private position = 0;
  readonly journal: JournalEntry[] = [];
  private readonly pending = new Map<string, { info: PendingEscalation; decision?: EscalationDecision }>();
  /** Leases the runs before this one (of a continued chain) took and did not release. */
  private carriedLeases: LeaseRecord[] = [];
  private readonly status = new RunStatusBoard();

  /**
   * Asks the worker what this run may reach and hold (its manifest and the principal's grants),
   * and opens a StepCtx over exactly that. A request for what the worker does not declare fails
   * the run with a non-retryable `RunRefused` or `ModelRefused`.
   */
  static async open(request: OpenRequest): Promise<StepCtx> {
    const { policy, carry, stream: priorStream, given, givenSensitivity, ...asked } = request;
    const ask: AuthorizeRequest = carry ? { ...asked, carried: carriedFrom(carry) } : asked;
    // Answerable while the worker decides: nothing has happened and nobody is asked yet. The stream
    // takes its subscribers' polls from the start.
    const stream = new RunStream(priorStream);
    setHandler(journalQuery, () => []);
    setHandler(pendingEscalations, () => []);
    let authority;
    try {
      const summary = `authorize ${request.principal ?? carry?.identity.principal ?? 'by credential'}`;
      authority = await authorizeRun.executeWithOptions({ summary }, [ask]);
    } catch (err) {
      // Refused (the worker's final answer, as the local activity's own failure or an activity's cause):
      // listed under the principal it asked for, as a refused attempt to act for it.
      const refusal = err instanceof ActivityFailure ? err.cause : err;
      // A run whose identity the worker refused is listed as unverified, never as the principal it named.
      const asking = request.principal ?? carry?.identity.principal;
      if (refusal instanceof ApplicationFailure && refusal.nonRetryable && asking)
        labelRun(refusal.type === IDENTITY_REFUSED ? `unverified:${asking}` : asking, undefined);
      const cause = err instanceof ActivityFailure ? err.cause : undefined;
      if (cause instanceof ApplicationFailure && cause.nonRetryable)
        throw ApplicationFailure.nonRetryable(cause.message, cause.type ?? undefined);
      throw err;
    }
    labelRun(authority.principal, authority.manifestDigest);
    if (authority.withheld.grants.length || authority.withheld.capabilities.length)
      upsertMemo({ toolplaneWithheld: authority.withheld });
    const step = new StepCtx(
      {
        catalog: ToolCatalog.fromGranted(authority.tools, authority.declared),
        principal: authority.principal,
        identity: authority.identity,
        ticket: authority.ticket,
        grants: authority.grants,
        policy: policy ?? ALLOW_ALL,
        capabilities: authority.capabilities,
        manifestDigest: authority.manifestDigest,
        verifiesDecisions: authority.verifiesDecisions === true,
        ...(authority.caps ? { caps: authority.caps } : {}),
      },
      stream,
    );
    // Who decides the calls: toolRun, which the worker agreed to serve without a gate; a delegated
    // child, whose call its parent's gate decided (the worker checked the parent's ticket and ids);
    // else the manifest, on every call.
    if (asked.ungoverned) step.decider = 'none';
    else if (carry && carriedFrom(carry).from === 'parent') step.decider = 'parent';
    step.given = { value: given, ...(givenSensitivity ? { sensitivity: givenSensitivity } : {}) };
    return step;
  }

  /** Who decides this run's calls when the caller passes no manifest gate of its own. */
  private decider: 'manifest' | 'parent' | 'none' = 'manifest';
  /** What the principal gave the run (`open({ given })`), labelled once the workflow makes its first call. */
  private given?: { value: unknown; sensitivity?: Sensitivity };
  /** The manifest's rules on the workflow's own calls: the run's labels and usage. */
  private governance?: RunGovernance;
  private carriedGovernance?: RunGovernanceState;

  private runGovernance(): RunGovernance {
    if (this.governance) return this.governance;
    const caps = this.scope.caps;
    this.governance = this.carriedGovernance
      ? RunGovernance.restore(this.carriedGovernance, caps)
      : RunGovernance.start({
          given: this.given?.value,
          sensitivity: this.given?.sensitivity,
          caps,
          startedAt: Date.now(),
        });
    return this.governance;
  }

  /** The run's stream: what it publishes for clients (`streamRun`), the run's effects and its model's tokens. */
  readonly stream: RunStream;

  constructor(
    readonly scope: RunScope,
    stream?: RunStream,
  ) {
    this.stream = stream ?? new RunStream();
    this.status.credentialed = scope.verifiesDecisions === true;
    setHandler(journalQuery, () => this.ordered());
    setHandler(pendingEscalations, () => [...this.pending.values()].filter((p) => !p.decision).map((p) => p.info));
    // Rejected in the handler, never in a validator: a validator's rejection leaves a speculative
    // workflow task the server drops, and an SDK flag the OpenTelemetry interceptors first set there
    // is then missing from history, so the run fails every task after a restart (the family of
    // sdk-typescript#2023, which reports the PRNG drift; this flag loss has no upstream report).
    // An accepted update that fails is in history: the audit keeps the rejected attempt too.
    // The handler is async: on a worker with an identity it asks the worker (a local activity) who decides,
    // and a refusal is the accepted update's failure, in history beside the attempt, as above.
    setHandler(resolveEscalation, async (decision) => {
      const p = this.waitingFor(decision);
      if (!this.scope.verifiesDecisions) {
        p.decision = decision;
        return { accepted: true as const, ...(decision.by !== undefined ? { by: decision.by } : {}) };
      }
      const taken = await this.verifiedDecision(decision, p.info);
      // Asked again: the call may have been decided, or its deadline passed, while the worker answered.
      if (this.waitingFor(decision) !== p)
        rejectDecision(DecisionRejectedReason.NotWaiting, `the call under ${decision.effectKey} was decided meanwhile`);
      // Or the same credential decided another call meanwhile (two decisions sent at once).
      this.unspent(decision.credential!);
      this.spentCredentials.add(decision.credential!);
      p.decision = taken;
      return { accepted: true as const, by: taken.by };
    });
  }

  /** Credentials that decided a call of this run: one read from its history decides nothing more. */
  private readonly spentCredentials = new Set<string>();

  private unspent(credential: string): void {
    if (this.spentCredentials.has(credential))
      rejectDecision(
        DecisionRejectedReason.Replayed,
        'this credential already decided a call of this run; each decision carries a credential of its own',
      );
  }

  /** The call waiting under the decision's key, if the decision answers its question. */
  private waitingFor(decision: EscalationDecision): { info: PendingEscalation; decision?: EscalationDecision } {
    const p = this.pending.get(decision.effectKey);
    if (!p || p.decision)
      rejectDecision(
        DecisionRejectedReason.NotWaiting,
        `no call is waiting for a decision under effect key ${decision.effectKey}`,
      );
    if (!DECISIONS[p.info.kind].includes(decision.decision))
      rejectDecision(
        DecisionRejectedReason.WrongQuestion,
        `"${String(decision.decision)}" does not answer a ${p.info.kind} question; expected ${DECISIONS[p.info.kind].join(', ')}`,
      );
    return p;
  }

  /** The decision as the worker verified it: by its credential's subject, a declared approver, not the run's own principal. */
  private async verifiedDecision(decision: EscalationDecision, info: PendingEscalation): Promise<EscalationDecision> {
    const { credential, by, ...rest } = decision;
    if (typeof credential !== 'string' || credential.length === 0)
      rejectDecision(
        DecisionRejectedReason.NoCredential,
        `"${decision.decision}" carries no credential; this run's worker takes decisions only from declared approvers with a verified credential`,
      );
    this.unspent(credential);
    let who;
    try {
      who = await authorizeDecision.executeWithOptions({ summary: `who decides #${info.position} ${info.toolId}` }, [
        {
          credential,
          ...(by !== undefined ? { by } : {}),
          decision: decision.decision,
          toolId: info.toolId,
          effectKey: decision.effectKey,
          ...(info.rule !== undefined ? { rule: info.rule } : {}),
          runPrincipal: this.scope.identity.principal,
        },
      ]);
    } catch (err) {
      if (isCancellation(err)) throw err;
      // The worker's refusal: the local activity's own failure, or an activity failure's cause.
      const cause = err instanceof ActivityFailure ? err.cause : err;
      if (cause instanceof ApplicationFailure && cause.type === IDENTITY_REFUSED) {
        const refused = (cause.details?.[0] as { reason?: unknown } | undefined)?.reason;
        rejectDecision(
          (typeof refused === 'string' && Object.prototype.hasOwnProperty.call(REJECTED_FOR, refused)
            ? REJECTED_FOR[refused]
            : undefined) ?? DecisionRejectedReason.BadCredential,
          `"${decision.decision}" refused: ${cause.message}`,
        );
      }
      rejectDecision(
        DecisionRejectedReason.Unavailable,
        `the worker could not check who decides: ${failureMessage(cause ?? err)}`,
      );
    }
    return { ...rest, by: who.by };
  }

  get catalog(): ToolCatalog {
    return this.scope.catalog;
  }

  /**
   * The run's ticket as the run that continues it (continue-as-new) or a child it delegates to shows it
   * to the worker (`StepCtx.open({ carry })`): such a run needs no credential of its own, and gets no
   * more than this run holds.
   */
  carry(): TicketCarry {
    return {
      identity: this.scope.identity,
      grants: [...this.scope.grants],
      capabilities: [...(this.scope.capabilities ?? [])],
      mac: this.scope.ticket.carry,
    };
  }

  /** The lease lifecycle, in the run's memo: visible in the Web UI and kept in history. */
  private leases(): LeaseRecord[] {
    return [...this.carriedLeases, ...this.journal.flatMap((e) => (e.lease ? [e.lease] : []))];
  }

  private recordLeases(): void {
    upsertMemo({
      toolplaneLeases: Object.fromEntries(this.leases().map((l) => [l.id, l.states.join(' → ')])),
    });
  }

  /** Ends every lease the run still holds. */
  releaseLeases(): void {
    const held = this.leases().filter((l) => l.states.at(-1) !== 'released');
    if (held.length === 0) return;
    for (const l of held) l.states.push('released');
    this.recordLeases();
  }

  /** Where the run stands, for the run that continues it (call between turns, with no call in flight). */
  state(): StepState {
    return {
      position: this.position,
      leases: this.leases()
        .filter((l) => l.states.at(-1) !== 'released')
        .map((l) => ({ id: l.id, states: [...l.states] })),
      refusals: this.status.refusals(),
      ...(this.governance
        ? { governance: this.governance.state() }
        : this.carriedGovernance
          ? { governance: this.carriedGovernance }
          : {}),
    };
  }

  /** Picks up where the continued run stood: its next position and the leases it still holds. */
  resume(state: StepState): void {
    this.position = state.position;
    this.carriedLeases = state.leases.map((l) => ({ id: l.id, states: [...l.states] }));
    this.status.carriedRefusals = state.refusals ?? 0;
    if (state.governance) this.carriedGovernance = state.governance;
  }

  private readonly escalator: Escalator = {
    await: async (info) => {
      const slot: { info: PendingEscalation; decision?: EscalationDecision } = { info };
      this.pending.set(info.effectKey, slot);
      this.publishStatus();
      const inDoubt = info.kind === 'in_doubt';
      const call = { position: info.position, toolId: info.toolId, effectKey: info.effectKey };
      if (inDoubt)
        this.stream.publish({ type: 'call-escalated', ...call, reason: info.reason, deadline: info.deadline });
      try {
        const decided = await condition(() => slot.decision !== undefined, Math.max(0, info.deadline - Date.now()), {
          summary: `${info.kind === 'approval' ? 'approval' : 'in-doubt decision'} deadline ${readableTime(info.deadline)}: #${info.position} ${info.toolId}`,
        });
        const decision = decided ? slot.decision : undefined;
        if (inDoubt)
          this.stream.publish({
            type: 'escalation-decided',
            ...call,
            decision:
              decision?.decision === 'retry' || decision?.decision === 'landed' || decision?.decision === 'abort'
                ? decision.decision
                : 'expired',
            ...(decision?.by !== undefined ? { by: decision.by } : {}),
          });
        return decision;
      } catch (err) {
        // Cancelled while waiting: the run stops saying it waits, and says nobody decided the call.
        if (isCancellation(err)) this.status.waitCutShort(info);
        throw err;
      } finally {
        this.pending.delete(info.effectKey);
        this.publishStatus();
      }
    },
  };

  /**
   * The run ends without completing, cancelled or failed with `err` (a run continuing as new has
   * not ended): it waits for nobody any more, and its Current Details say how it ended. Call it
   * where the workflow lets an error out, so a call still waiting in another lane is not shown
   * as waiting on a run that is over.
   */
  ended(err: unknown): void {
    if (err instanceof ContinueAsNew) return;
    const how = isCancellation(err)
      ? ({ how: 'cancelled' } as const)
      : ({ how: 'failed', message: failureMessage(err) } as const);
    this.status.ended(how);
    this.stream.publish({ type: 'run-ended', ...how });
    this.pending.clear();
    this.publishStatus();
  }

  /** Refusals, whom the run waits for and a summary of its effects, where operators look. */
  private publishStatus(): void {
    this.status.publish([...this.pending.values()].filter((p) => !p.decision).map((p) => p.info));
  }

  /**
   * What the run is about, in one line, shown first in its Current Details in the Web UI from now
   * on. The Web UI's Summary is whatever started the run gave as `staticSummary` (`startAgentRun`
   * gives the prompt); workflow code cannot set it, so a run started without one still tells the
   * operator what it is about. `governedTools` summarises the run with its prompt.
   */
  summarise(text: string): void {
    const line = text.replace(/\s+/g, ' ').trim();
    this.status.headline = `**Summary**: ${line.length > SUMMARY_CHARS ? `${line.slice(0, SUMMARY_CHARS - 1)}…` : line}`;
    this.publishStatus();
  }

  /** The journal in position order (concurrent calls may enter it out of order). */
  ordered(): JournalEntry[] {
    return [...this.journal].sort((a, b) => a.position - b.position);
  }

  /** Reserves `n` consecutive positions; returns the first. */
  reserve(n: number): number {
    const first = this.position;
    this.position += n;
    return first;
  }

  /** What the call pipeline needs of this run. */
  private host?: CallHost;

  /**
   * Calls a tool: refuses an unreachable tool, bad arguments or a rule's verdict before any activity
   * exists. Every rule the manifest declares for the tool holds, whatever workflow makes the call:
   * field rules, the taint rule, sensitivity, egress, spend and the worker's caps, over the labels of
   * what this run's calls returned (see workflows/gate/run-governance.ts for how arguments are labelled).
   * A `gate` of the workflow's own only adds (a refusal, a person's approval); `acceptUntrusted`
   * waives the trust rules for one call where the tool's declaration allows it.
   */
  callTool(toolId: string, args: unknown, options: CallOptions = {}): Promise<unknown> {
    const entry: JournalEntry = {
      position: options.position ?? this.position++,
      toolId,
      decision: 'allowed',
      attempts: 0,
      recovery: 'none',
      modelCallId: options.modelCallId,
    };
    this.journal.push(entry);
    this.status.tally.opened();
    this.host ??= {
      catalog: this.scope.catalog,
      principal: this.scope.principal,
      ticket: this.scope.ticket,
      policy: this.scope.policy,
      capabilities: this.scope.capabilities,
      escalator: this.escalator,
      leasesChanged: () => this.recordLeases(),
      settled: (e, done) => {
        if (done) this.status.toolCalled(e.toolId);
        this.status.tally.settled(e);
        recordRefusal(e, this.scope.catalog.declared(e.toolId)?.decl.description);
        this.publishStatus();
      },
      publish: (event) => this.stream.publish(event),
    };
    // agentRun and the AI SDK tools pass the manifest's gate with the labels of what their model read.
    if (isManifestGate(options.gate) || this.decider !== 'manifest') return runCall(this.host, entry, args, options);
    return this.governedCall(entry, args, options);
  }

  /** A workflow's own call, judged by the manifest's rules; its output enters the run's labels. */
  private async governedCall(entry: JournalEntry, args: unknown, options: CallOptions): Promise<unknown> {
    const governance = this.runGovernance();
    let callTrusted = false;
    let origins: CitedOrigin[] = [];
    const gate = governance.gate(this.scope, {
      ...(options.gate ? { gate: options.gate } : {}),
      ...(options.acceptUntrusted !== undefined ? { acceptUntrusted: options.acceptUntrusted } : {}),
      onAllowed: (trusted) => (callTrusted = trusted),
    });
    const output = await runCall(this.host!, entry, args, {
      ...options,
      gate,
      onOrigins: (o) => {
        origins = o;
        options.onOrigins?.(o);
      },
    });
    governance.produced({
      toolId: entry.toolId,
      output,
      callTrusted,
      origins,
      sensitivity: this.scope.catalog.declared(entry.toolId)!.decl.sensitivity.output,
    });
    return output;
  }
}
