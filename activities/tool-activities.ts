// The tool activity: performs one call, at most once per idempotency key as far as the tool honours it.
import { createHmac } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { FailureType } from '../catalog/failure-types';
import type { Manifest, Safety } from '../catalog/manifest';
import { shortDigest, toolDigest } from '../catalog/digest';
import type { Policy } from '../catalog/policy';
import { idempotencyKey } from '../workflows/effect-key';
import { DEFAULT_LARGE_OUTPUT_BYTES, FileBlobStore, offload, type BlobStore } from './blob-store';
import { ctxFromActivity } from './ctx';
import { withToolSpan, type GenAiToolType } from './telemetry';
import type { LedgerRef, Reconciliation, Tool, ToolEvent } from './tool';
import { ToolError } from './tool-errors';
import type { ToolRegistry } from './tool-registry';

/**
 * Kept small: it is written to history once per call. The effect key is the activity id (a
 * resend adds `.N`), so it is not repeated here.
 */
export interface PerformRequest {
  toolId: string;
  args: Record<string, unknown>;
  principal: string;
  requiresLedger?: boolean;
  /** A failure that reached the provider may be tried again (`retries_landed`). */
  retriesLanded?: boolean;
  budget?: { remainingCalls?: number; remainingCostMicros?: number };
  /** Omitted when the run allows every granted tool. */
  policy?: Policy;
  /** The model's tool-call id this execution answers (telemetry only). */
  modelCallId?: string;
  /** Set on a resend: which recovery path sent it again. */
  recoveryPath?: string;
  /** The run's declaration of the tool, as a short digest; a worker that declares it otherwise refuses. */
  digest?: string;
  /** The extension-runtime lease the run granted this call (extension tools only). */
  lease?: string;
}


export interface PerformResult {
  output: unknown;
  /** What the tool reported while it ran (an extension starting, ...); omitted when nothing. */
  events?: ToolEvent[];
}

export interface ReconcileRequest {
  toolId: string;
  principal: string;
  lease?: string;
}

/** `ek-…`, `ek-….1` (a resend) and `ek-….reconcile.0` all name the effect `ek-…`. */
export function effectKeyOfActivityId(activityId: string): string {
  return activityId.split('.')[0]!;
}

export interface ToolActivityDeps {
  registry: ToolRegistry;
  /** The worker's own manifest: a run pinned to another declaration of a tool is refused. */
  manifest?: Manifest;
  /** How a tool is served, for `gen_ai.tool.type`; in-process tools by default. */
  toolType?: (toolId: string) => GenAiToolType;
  /** Signs `produced_by` references; a worker without one cannot serve `requires_ledger` tools. */
  ledgerSecret?: string;
  /** Where outputs above `largeOutputBytes` go instead of history. */
  blobs?: BlobStore;
  largeOutputBytes?: number;
}

export function signLedgerRef(secret: string, ref: Omit<LedgerRef, 'signature'>): LedgerRef {
  const signature = createHmac('sha256', secret).update(`${ref.workflowId}\n${ref.runId}\n${ref.effectKey}`).digest('hex');
  return { ...ref, signature };
}

/** Output must round-trip through JSON: replay rebuilds it from history, not from the tool. */
function jsonRoundTrip(toolId: string, output: unknown): unknown {
  if (output === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(output));
  } catch (err) {
    throw ApplicationFailure.nonRetryable(`${toolId} returned output that is not JSON: ${(err as Error).message}`, FailureType.FailedLanded);
  }
}

/** Whether Temporal may run this activity again after this failure (only `retry` tools get more than one attempt). */
function retryable(type: FailureType, req: PerformRequest): boolean {
  if (type === FailureType.Unavailable || type === FailureType.Invalid) return false;
  if (type === FailureType.FailedLanded) return req.retriesLanded === true;
  return true;
}

function toFailure(err: unknown, safety: Safety, req: PerformRequest): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof ToolError) {
    return ApplicationFailure.create({ type: err.type, message: err.message, details: err.details === undefined ? [] : [err.details], nonRetryable: !retryable(err.type, req) });
  }
  // Tool code that threw something untyped may have sent the request already.
  const type = safety === 'read_only' ? FailureType.Rejected : FailureType.InDoubt;
  return ApplicationFailure.create({ type, message: `${(err as Error)?.message ?? String(err)} (untyped error from tool code)`, nonRetryable: !retryable(type, req) });
}

function unavailable(toolId: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`no implementation of ${toolId} on this worker`, FailureType.Unavailable);
}

/** The same key the workflow would derive: workflow id and effect key, nothing else. */
function keyFor(effectKey: string): string {
  return idempotencyKey(Context.current().info.workflowExecution?.workflowId ?? '', effectKey);
}

export function createToolActivities(deps: ToolActivityDeps) {
  const lookup = (toolId: string): Tool => {
    const tool = deps.registry.get(toolId);
    if (!tool) throw unavailable(toolId);
    return tool;
  };

  const blobs = deps.blobs ?? new FileBlobStore();
  const declared = new Map((deps.manifest?.tools ?? []).map((t) => [t.id, shortDigest(toolDigest(t))]));
  const toolType = (toolId: string): GenAiToolType => deps.toolType?.(toolId) ?? (deps.registry.get(toolId)?.origin === 'extension' ? 'extension' : 'function');

  return {
    async performTool(req: PerformRequest): Promise<PerformResult> {
      const tool = lookup(req.toolId);
      const ours = declared.get(req.toolId);
      if (req.digest && ours && req.digest !== ours) {
        throw ApplicationFailure.nonRetryable(`the run declares ${req.toolId} otherwise than this worker's manifest (digest ${req.digest}, worker ${ours}); nothing was sent`, FailureType.Unavailable);
      }
      const info = Context.current().info;
      const effectKey = effectKeyOfActivityId(info.activityId);
      const events: ToolEvent[] = [];
      const ctx = ctxFromActivity({ ...req, effectKey, idempotencyKey: keyFor(effectKey), onEvent: (e) => events.push(e) });
      const span = { operation: 'execute_tool' as const, toolId: req.toolId, toolType: toolType(req.toolId), effectKey, attempt: info.attempt, recoveryPath: req.recoveryPath ?? 'none', modelCallId: req.modelCallId };
      return withToolSpan(span, async () => {
        try {
          let output: unknown;
          if (tool.callWithLedger) {
            let producedBy: LedgerRef | undefined;
            if (deps.ledgerSecret) {
              const run = info.workflowExecution;
              producedBy = signLedgerRef(deps.ledgerSecret, { workflowId: run?.workflowId ?? '', runId: run?.runId ?? '', effectKey });
            } else if (req.requiresLedger) {
              throw ApplicationFailure.nonRetryable(`${req.toolId} requires ledger provenance and this worker has no ledger secret`, FailureType.Unavailable);
            }
            output = await tool.callWithLedger(ctx, req.args, producedBy);
          } else {
            output = await tool.call(ctx, req.args);
          }
          const stored = await offload(jsonRoundTrip(req.toolId, output), blobs, deps.largeOutputBytes ?? DEFAULT_LARGE_OUTPUT_BYTES);
          return { output: stored, ...(events.length ? { events } : {}) };
        } catch (err) {
          throw toFailure(err, tool.def().safety, req);
        }
      });
    },

    async reconcileTool(req: ReconcileRequest): Promise<Reconciliation> {
      const tool = lookup(req.toolId);
      if (!tool.reconcile) throw ApplicationFailure.nonRetryable(`${req.toolId} cannot reconcile`, FailureType.Unavailable);
      const info = Context.current().info;
      const effectKey = effectKeyOfActivityId(info.activityId);
      const ctx = ctxFromActivity({ ...req, effectKey, idempotencyKey: keyFor(effectKey) });
      const span = { operation: 'reconcile_tool' as const, toolId: req.toolId, toolType: toolType(req.toolId), effectKey, attempt: info.attempt, recoveryPath: 'reconcile' };
      return withToolSpan(span, async (s) => {
        const answer = await tool.reconcile!(ctx, ctx.idempotencyKey);
        s.setAttribute('toolplane.reconcile.answer', answer.status);
        return answer.status === 'landed' ? { status: 'landed', output: jsonRoundTrip(req.toolId, answer.output) } : answer;
      });
    },
  };
}

export type ToolActivities = ReturnType<typeof createToolActivities>;
