/**
 * The in-process tool seam: trusted TypeScript code that runs inside the tool activity and
 * receives a `Ctx` built from Temporal's activity context.
 */
import type { Safety } from '../catalog/manifest';
import type { Policy } from '../catalog/policy';
import type { LedgerRef } from '../common/ledger-ref';
import type { CarriedContent, Reconciliation, RemainingBudget, ToolEvent } from '../common/wire';

export type { LedgerRef } from '../common/ledger-ref';
export type { RemainingBudget } from '../common/wire';

/** What an implementation says about itself; checked against the manifest at worker start. */
export interface ToolDef {
  /** The tool identity, `tool://server/name`. */
  id: string;
  description: string;
  inputSchema: Record<string, unknown>;
  safety: Safety;
}

export interface Ctx {
  /** Stable across worker crashes, retries and resets that replay to the same point. */
  readonly idempotencyKey: string;
  /** The extension-runtime lease the run granted this call, if any. */
  readonly lease?: string;
  /** The run this call serves. */
  readonly workflowId: string;
  readonly runId: string;
  /** The call's effect key: its activity id in the run's history. */
  readonly effectKey: string;
  readonly toolId: string;
  readonly principal: string;
  /**
   * Which try of this call this is, from 1: the sends of the call before this one (each Temporal
   * attempt is a send of its own) plus this send's Temporal attempt.
   */
  readonly attempt: number;
  /** Epoch milliseconds (this worker's clock) when this attempt's start-to-close runs out, counted from when it started here. */
  readonly deadline: number | undefined;
  /** What the run may still spend after this call (only the limits the run has), so a tool can stop early. */
  readonly budget: RemainingBudget;
  readonly policy: Policy;
  readonly signal: AbortSignal;
  /** Throws `Cancelled` if the run cancelled this call or its deadline passed. */
  check(): void;
  emit(event: ToolEvent): void;
  heartbeat(detail?: unknown): void;
  /**
   * Says that this call's output repeats the arguments of an earlier call, the one `producedBy`
   * names (a recalled fact). The plane verifies the reference against its signature and history and
   * gives those values the labels of their verified origin; without a reference, or with one that
   * does not verify, they stay untrusted.
   */
  cite(producedBy: LedgerRef | undefined, args: Record<string, unknown>): void;
}

/** A tool result: a string, or JSON, or content blocks for rich output. */
export type ToolOutput = unknown;

/**
 * Where an implementation comes from. Declared, never inferred: a tool that says nothing is
 * `unknown`, and a worker refuses to start with one (fail closed).
 */
export type ToolOrigin = 'builtin' | 'extension' | 'unknown';

/**
 * The low-level tool seam: a definition and handlers that receive `unknown` input. Write in-process
 * tools with `defineTool` (one zod schema types the input and is the declared schema); implement
 * `Tool` directly where the schema comes from elsewhere (MCP servers, extensions, generated tools).
 */
export interface Tool {
  /** `builtin` for in-process code of this deployment; `extension` for tools served by another process. */
  readonly origin?: ToolOrigin;
  def(): ToolDef;
  call(ctx: Ctx, input: unknown): Promise<ToolOutput>;
  /**
   * Override when the tool creates state that later decisions may trust (a memory write, an
   * identity change, an evidence artefact): `producedBy` is the signed reference to the journal
   * entry that caused this call; store it with what you create. It is `undefined` on a worker
   * without a ledger key (a tool declaring `requires_ledger` is then never called).
   */
  callWithLedger?(ctx: Ctx, input: unknown, producedBy: LedgerRef | undefined): Promise<ToolOutput>;
  /**
   * Ask the provider whether the call with this idempotency key landed. Only tools whose
   * manifest recovery is `reconcile` need it.
   */
  reconcile?(ctx: Ctx, idempotencyKey: string): Promise<Reconciliation>;
  /**
   * What a call would send beside its bound arguments (an attachment named by id, a file it
   * uploads): how many bytes and how sensitive, resolved before the send. Needed when the
   * manifest declares `carried: { resolve: tool }`. Throwing refuses the call (fail closed).
   */
  carried?(ctx: Ctx, args: unknown): Promise<CarriedContent>;
}
