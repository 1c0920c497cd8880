// Workflow-safe: what a call asks of the pipeline (CallOptions, passed to `StepCtx.callTool`) and what
// the pipeline needs of the run it calls for (CallHost).
import type { OfferedTool, ToolCatalog } from '../../catalog/tool-catalog';
import type { Policy } from '../../catalog/policy';
import type { EffectEvent } from '../../common/run-events';
import type { RunTicket } from '../../common/ticket';
import type { CitedOrigin } from '../../common/wire';
import type { JournalEntry } from '../../common/journal';
import type { Escalator } from '../recovery';
import type { Gate } from './gate';
import type { Delegate } from './perform';
import type { McpCallProof } from '../../common/session-proof';

export interface CallOptions {
  /** The model's tool call this execution answers; telemetry only, never in the effect key. */
  modelCallId?: string;
  /** The offer the model named; a call to any other tool is refused. */
  answering?: OfferedTool;
  /**
   * A check of the workflow's own. On a workflow's own call it only adds to the manifest's rules,
   * which run after it: it may refuse the call or ask a person, never change the arguments or let
   * through what the manifest refuses.
   */
  gate?: Gate;
  /**
   * Waives the manifest's trust rules (protected fields, the taint rule for mutating tools) for this
   * call, saying why: allowed only for a tool whose declaration says `accepts_untrusted_on_request`,
   * else the call is refused (rule `accept_untrusted`) before any activity exists. Sensitivity, what
   * the call carries, egress, spend and the run's limits still hold. Recorded in the call's journal
   * entry (`acceptedUntrusted`) and the run's Current Details.
   */
  acceptUntrusted?: { reason: string };
  /**
   * The arguments are a model's, passed through by the workflow (a model it called itself chose them):
   * judged as agentRun judges its model's calls, so a value no source produced is written by no one
   * the run trusts, never the workflow's own words.
   */
  fromModel?: boolean;
  /** A position reserved with `reserve()`, so concurrent calls keep the order the model gave. */
  position?: number;
  /** Performs the prepared, governed call elsewhere (a child workflow for independent tools). */
  delegate?: Delegate;
  /** Receives the labels of what the tool cited (recalled facts), verified by the worker. */
  onOrigins?: (origins: CitedOrigin[]) => void;
  /** In an MCP session: the gateway's call key and MAC, which the worker checks before the tool runs. */
  mcpCall?: McpCallProof;
}

/** What the pipeline needs of the run it calls for. */
export interface CallHost {
  catalog: ToolCatalog;
  principal: string;
  /** The principal is the run's first opening's: a request leaves it out, and the worker reads it there. */
  principalInOpening?: boolean;
  ticket: RunTicket;
  policy: Policy;
  capabilities?: readonly string[];
  escalator: Escalator;
  /** The run's leases changed (one granted, started or committed). */
  leasesChanged(): void;
  /** The call ended: performed (`done`), or refused or failed, its journal entry final. */
  settled(entry: JournalEntry, done: boolean): void;
  /**
   * Tells the run's stream (a view for clients; nothing decides from it). The event holds the call's
   * journal entry, which changes after: it is copied as it is published (RunStream.publish).
   */
  publish?(event: EffectEvent): void;
}

/**
 * What the promise of a call resolves to, written in the call's last step: `landed` with the output of a
 * call that landed, `failed` with what ended any other (a refusal, a failure, a cancellation). Whatever
 * either returns or throws is what the call comes to. It spares the caller a `.then` of its own, and the
 * promise that costs on replay (a stack capture in the sandbox): the agent paths answer the model this way.
 */
export interface CallReply {
  landed(output: unknown): unknown;
  failed(err: unknown): unknown;
}

/** Calls' replies, by the options they were made with: a way in for the agent paths that CallOptions does not show. */
const replies = new WeakMap<CallOptions, CallReply>();

/** The options, with the reply the call's promise resolves to (`CallReply`). */
export function replyingWith(options: CallOptions, reply: CallReply): CallOptions {
  replies.set(options, reply);
  return options;
}

export function replyOf(options: CallOptions): CallReply | undefined {
  return replies.get(options);
}
