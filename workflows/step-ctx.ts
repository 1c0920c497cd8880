// Workflow-safe: the one door through which workflow code reaches a tool. A call passes, in order:
// prepare → gate → approval → lease → perform (see workflows/call/). StepCtx is the facade a workflow
// calls; each concern lives by name under workflows/run/: opening the run (authority.ts), the calls
// waiting on a person (escalations.ts), leases (leases.ts), what operators see (status.ts, beside
// run-status.ts), the continue-as-new state (state.ts) and the workflow's own governed calls (own-calls.ts).
import { setHandler } from '@temporalio/workflow';
import type { AuthorizeRequest } from '../common/wire';
import type { RunIdentity, RunTicket, TicketCarry } from '../common/ticket';
import type { RunCaps } from '../catalog/caps';
import type { Sensitivity } from '../catalog/manifest';
import type { Policy } from '../catalog/policy';
import type { ToolCatalog } from '../catalog/tool-catalog';
import { pendingEscalations, type PendingEscalation } from './escalation';
import { runCall, type CallHost, type CallOptions } from './call/pipeline';
import { governedBy } from './gate/governance';
import { journalQuery } from './journal-query';
import type { JournalEntry, LeaseState } from '../common/journal';
import { RunStatusBoard } from './run-status';
import { RunStream, type RunStreamState } from './run-stream';
import { authorize, type Decider } from './run/authority';
import { Escalations } from './run/escalations';
import { RunLeases } from './run/leases';
import { OwnCalls } from './run/own-calls';
import type { StepState } from './run/state';
import { callSettled, runEnd, summaryHeadline } from './run/status';
import { runInputDigest } from '../common/input-binding';

export type { Gate, GateVerdict } from './call/gate';
export type { Delegate } from './call/perform';
export type { CallOptions } from './call/pipeline';
export type { StepState } from './run/state';
export { IDENTITY_REFUSED } from './run/authority';

export interface RunScope {
  catalog: ToolCatalog;
  principal: string;
  /** Who the run acts for, as the worker established it (its verified subject and groups). */
  identity: RunIdentity;
  /** The worker's ticket: every call presents its MAC for the tool. */
  ticket: RunTicket;
  grants: readonly string[];
  /**
   * The granted tools the run named in the grants it asked for: the principal's request, as the host
   * narrowed the run to it. A tool that `requires_request` runs without a question only if it is here.
   */
  requested?: readonly string[];
  policy: Policy;
  /** Capabilities the worker granted the run, such as the extension-runtime lease. */
  capabilities?: readonly string[];
  /** The digest of the manifest the worker governs this run by. */
  manifestDigest?: string;
  /** The worker verifies who decides this run's waiting calls (`authorizeDecision`); else `by` is taken as given. */
  verifiesDecisions?: boolean;
  /** The worker's public key, which the run's stream checks token batches with; absent in a run opened before signed tokens. */
  streamKey?: string;
  /**
   * The worker's caps on this run (turns, tool calls, tokens, cost, deadline, delegation depth), from
   * its manifest's `limits` and the principal's entry; absent when it caps nothing. A run's own limits
   * only tighten them: `agentRun` and `governedTools` budget within them, and a workflow of one's own
   * that counts its own work reads them here.
   */
  caps?: RunCaps;
  /** This is the run's first opening: its calls leave their principal out, and the worker reads it from the opening. */
  firstOpening?: boolean;
}

/** A lease and its lifecycle so far. */
export interface LeaseRecord {
  id: string;
  states: LeaseState[];
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
  /**
   * The run's input its credential was issued for (typically the workflow's argument; a `credential`
   * field in it is left out): the worker refuses a credential bound to another input
   * (`runInputBinding`, `signCredential({ runInput })`). Left out, the credential binds the workflow type alone.
   */
  input?: unknown;
}

export class StepCtx {
  private position = 0;
  readonly journal: JournalEntry[] = [];
  private readonly status = new RunStatusBoard();
  private readonly leases = new RunLeases(this.journal);
  private readonly escalations: Escalations;
  /** Who decides this run's calls when the caller passes no manifest gate of its own. */
  private decider: Decider = 'manifest';
  /** The manifest's rules on the workflow's own calls: the run's labels and usage. */
  private readonly own: OwnCalls;
  /** What the call pipeline needs of this run. */
  private host?: CallHost;

  /**
   * Asks the worker what this run may reach and hold (its manifest and the principal's grants),
   * and opens a StepCtx over exactly that. A request for what the worker does not declare fails
   * the run with a non-retryable `RunRefused` or `ModelRefused`.
   */
  static async open(request: OpenRequest): Promise<StepCtx> {
    const { policy, carry, stream: priorStream, given, givenSensitivity, input, ...rest } = request;
    const asked =
      input !== undefined && rest.credential !== undefined ? { ...rest, inputDigest: runInputDigest(input) } : rest;
    // Answerable while the worker decides: nothing has happened and nobody is asked yet. The stream
    // takes its subscribers' polls from the start.
    const stream = new RunStream(priorStream);
    setHandler(journalQuery, () => []);
    setHandler(pendingEscalations, () => []);
    const { scope, decider } = await authorize(asked, carry, policy);
    const step = new StepCtx(scope, stream);
    step.decider = decider;
    step.own.given = { value: given, ...(givenSensitivity ? { sensitivity: givenSensitivity } : {}) };
    return step;
  }

  /** The run's stream: what it publishes for clients (`streamRun`), the run's effects and its model's tokens. */
  readonly stream: RunStream;

  constructor(
    readonly scope: RunScope,
    stream?: RunStream,
  ) {
    this.stream = stream ?? new RunStream();
    this.stream.trust(scope.streamKey);
    this.status.credentialed = scope.verifiesDecisions === true;
    this.own = new OwnCalls(scope);
    setHandler(journalQuery, () => this.ordered());
    this.escalations = new Escalations({
      verifiesDecisions: scope.verifiesDecisions === true,
      runPrincipal: scope.identity.principal,
      stream: this.stream,
      status: this.status,
      changed: () => this.publishStatus(),
    });
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

  /** Ends every lease the run still holds. */
  releaseLeases(): void {
    this.leases.release();
  }

  /** Where the run stands, for the run that continues it (call between turns, with no call in flight). */
  state(): StepState {
    const governance = this.own.state();
    return {
      position: this.position,
      leases: this.leases.held(),
      refusals: this.status.refusals(),
      ...(governance ? { governance } : {}),
    };
  }

  /** Picks up where the continued run stood: its next position and the leases it still holds. */
  resume(state: StepState): void {
    this.position = state.position;
    this.leases.resume(state.leases);
    this.status.carriedRefusals = state.refusals ?? 0;
    this.own.resume(state.governance);
  }

  /**
   * The run ends without completing, cancelled or failed with `err` (a run continuing as new has
   * not ended): it waits for nobody any more, and its Current Details say how it ended. Call it
   * where the workflow lets an error out, so a call still waiting in another lane is not shown
   * as waiting on a run that is over.
   */
  ended(err: unknown): void {
    const how = runEnd(err);
    if (!how) return;
    this.status.ended(how);
    this.stream.publish({ type: 'run-ended', ...how });
    this.escalations.clear();
    this.publishStatus();
  }

  /** The calls waiting for a person's decision now (an approval, or an in-doubt call). */
  waitingOn(): PendingEscalation[] {
    return this.escalations.waiting();
  }

  /** Refusals, whom the run waits for and a summary of its effects, where operators look. */
  private publishStatus(): void {
    this.status.publish(this.escalations.waiting());
  }

  /**
   * What the run is about, in one line, shown first in its Current Details in the Web UI from now
   * on. The Web UI's Summary is whatever started the run gave as `staticSummary` (`startAgentRun`
   * gives the prompt); workflow code cannot set it, so a run started without one still tells the
   * operator what it is about. `governedTools` summarises the run with its prompt.
   */
  summarise(text: string): void {
    this.status.headline = summaryHeadline(text);
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
    this.host ??= this.callHost();
    // agentRun and the AI SDK tools pass the manifest's gate with the labels of what their model read.
    const manifest = governedBy(options.gate);
    if (manifest) return runCall(this.host, entry, args, options, { manifest });
    if (this.decider !== 'manifest') return runCall(this.host, entry, args, options);
    return this.own.call(this.host, entry, args, options);
  }

  /** What the call pipeline needs of this run: its authority, its escalations, its leases and status. */
  private callHost(): CallHost {
    return {
      catalog: this.scope.catalog,
      principal: this.scope.principal,
      ...(this.scope.firstOpening ? { principalInOpening: true } : {}),
      ticket: this.scope.ticket,
      policy: this.scope.policy,
      capabilities: this.scope.capabilities,
      escalator: this.escalations.escalator,
      leasesChanged: () => this.leases.record(),
      settled: (e, done) => {
        callSettled(this.status, this.scope.catalog, e, done);
        this.publishStatus();
      },
      publish: (event) => this.stream.publish(event),
    };
  }
}
