// The tool activity: performs one call, at most once per idempotency key as far as the tool honours it.
import { createHmac } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { FailureType } from '../catalog/failure-types';
import { mayGrant, mayHold } from '../catalog/authority';
import { EXTENSION_RUNTIME } from '../catalog/capabilities';
import type { Manifest, Safety } from '../catalog/manifest';
import { serverOf } from '../catalog/manifest';
import { shortDigest, toolDigest } from '../catalog/digest';
import type { Policy } from '../catalog/policy';
import { effectKeyOfActivityId, idempotencyKey } from '../common/effect-key';
import type { StoredOutput } from '../common/stored-output';
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
  /** Absent when the output is stored outside history (`stored`). */
  output?: unknown;
  /** Made only here, for an output above the threshold; a tool's output cannot imitate it. */
  stored?: StoredOutput;
  /** What the tool reported while it ran (an extension starting, ...); omitted when nothing. */
  events?: ToolEvent[];
}

export interface ReconcileRequest {
  toolId: string;
  principal: string;
  lease?: string;
}

export interface ToolActivityDeps {
  registry: ToolRegistry;
  /** The worker's own manifest: it decides what a principal may reach and hold. */
  manifest: Manifest;
  /** How a tool is served, for `gen_ai.tool.type`; in-process tools by default. */
  toolType?: (toolId: string) => GenAiToolType;
  /** Signs `produced_by` references; a worker without one cannot serve `requires_ledger` tools. */
  ledgerSecret?: string;
  /** Where outputs above `largeOutputBytes` go instead of history. */
  blobs?: BlobStore;
  largeOutputBytes?: number;
}

export function signLedgerRef(secret: string, ref: Omit<LedgerRef, 'signature'>): LedgerRef {
  const signature = createHmac('sha256', secret)
    .update(`${ref.workflowId}\n${ref.runId}\n${ref.effectKey}`)
    .digest('hex');
  return { ...ref, signature };
}

/** Output must round-trip through JSON: replay rebuilds it from history, not from the tool. */
function jsonRoundTrip(toolId: string, output: unknown): unknown {
  if (output === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(output));
  } catch (err) {
    throw ApplicationFailure.nonRetryable(
      `${toolId} returned output that is not JSON: ${(err as Error).message}`,
      FailureType.FailedLanded,
    );
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
  if (ToolError.is(err)) {
    return ApplicationFailure.create({
      type: err.type,
      message: err.message,
      details: err.details === undefined ? [] : [err.details],
      nonRetryable: !retryable(err.type, req),
    });
  }
  // Tool code that threw something untyped may have sent the request already.
  const type = safety === 'read_only' ? FailureType.Rejected : FailureType.InDoubt;
  return ApplicationFailure.create({
    type,
    message: `${(err as Error)?.message ?? String(err)} (untyped error from tool code)`,
    nonRetryable: !retryable(type, req),
  });
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
  const declared = new Map(deps.manifest.tools.map((t) => [t.id, shortDigest(toolDigest(t))]));
  const principals = deps.manifest.principals;

  /** The workflow already checked; the worker checks again against its own manifest, not the run's word. */
  const assertAuthority = (req: PerformRequest | ReconcileRequest): void => {
    if (!mayGrant(principals, req.principal, req.toolId)) {
      throw ApplicationFailure.nonRetryable(
        `${req.principal} may not be granted ${req.toolId} on this worker; nothing was sent`,
        FailureType.Unavailable,
      );
    }
    if (!req.toolId.startsWith('ext:')) return;
    const leaseFor = new RegExp(`^lease:${serverOf(req.toolId).replace(/[.]/g, '\\.')}:\\d+$`);
    if (!req.lease || !leaseFor.test(req.lease) || !mayHold(principals, req.principal, EXTENSION_RUNTIME)) {
      throw ApplicationFailure.nonRetryable(
        `${req.toolId} needs the ${EXTENSION_RUNTIME} lease this run was granted (${req.principal} ${mayHold(principals, req.principal, EXTENSION_RUNTIME) ? `holds it, but the lease is ${req.lease ?? 'missing'}` : 'may not hold it'}); nothing was started`,
        FailureType.Unavailable,
      );
    }
  };
  const toolType = (toolId: string): GenAiToolType =>
    deps.toolType?.(toolId) ?? (deps.registry.get(toolId)?.origin === 'extension' ? 'extension' : 'function');

  return {
    async performTool(req: PerformRequest): Promise<PerformResult> {
      const tool = lookup(req.toolId);
      const info = Context.current().info;
      const effectKey = effectKeyOfActivityId(info.activityId);
      assertAuthority(req);
      const ours = declared.get(req.toolId);
      if (req.digest && ours && req.digest !== ours) {
        throw ApplicationFailure.nonRetryable(
          `the run declares ${req.toolId} otherwise than this worker's manifest (digest ${req.digest}, worker ${ours}); nothing was sent`,
          FailureType.Unavailable,
        );
      }
      const events: ToolEvent[] = [];
      const ctx = ctxFromActivity({
        ...req,
        effectKey,
        idempotencyKey: keyFor(effectKey),
        onEvent: (e) => events.push(e),
      });
      const span = {
        operation: 'execute_tool' as const,
        toolId: req.toolId,
        toolType: toolType(req.toolId),
        effectKey,
        attempt: info.attempt,
        recoveryPath: req.recoveryPath ?? 'none',
        modelCallId: req.modelCallId,
      };
      return withToolSpan(span, async () => {
        let landed: unknown;
        try {
          let output: unknown;
          if (tool.callWithLedger) {
            let producedBy: LedgerRef | undefined;
            if (deps.ledgerSecret) {
              const run = info.workflowExecution;
              producedBy = signLedgerRef(deps.ledgerSecret, {
                workflowId: run?.workflowId ?? '',
                runId: run?.runId ?? '',
                effectKey,
              });
            } else if (req.requiresLedger) {
              throw ApplicationFailure.nonRetryable(
                `${req.toolId} requires ledger provenance and this worker has no ledger secret`,
                FailureType.Unavailable,
              );
            }
            output = await tool.callWithLedger(ctx, req.args, producedBy);
          } else {
            output = await tool.call(ctx, req.args);
          }
          landed = jsonRoundTrip(req.toolId, output);
        } catch (err) {
          throw toFailure(err, tool.def().safety, req);
        }
        let stored: StoredOutput | undefined;
        try {
          stored = await offload(
            landed,
            blobs,
            deps.largeOutputBytes ?? DEFAULT_LARGE_OUTPUT_BYTES,
            info.workflowExecution?.workflowId ?? '',
          );
        } catch (err) {
          // The effect happened; only keeping its output failed. Not the tool's failure, and never a reason to resend.
          throw ApplicationFailure.nonRetryable(
            `${req.toolId} landed, but its output could not be stored: ${(err as Error).message}`,
            FailureType.OutputUnstored,
          );
        }
        return { ...(stored ? { stored } : { output: landed }), ...(events.length ? { events } : {}) };
      });
    },

    async reconcileTool(req: ReconcileRequest): Promise<Reconciliation> {
      const tool = lookup(req.toolId);
      assertAuthority(req);
      if (!tool.reconcile)
        throw ApplicationFailure.nonRetryable(`${req.toolId} cannot reconcile`, FailureType.Unavailable);
      const info = Context.current().info;
      const effectKey = effectKeyOfActivityId(info.activityId);
      const ctx = ctxFromActivity({ ...req, effectKey, idempotencyKey: keyFor(effectKey) });
      const span = {
        operation: 'reconcile_tool' as const,
        toolId: req.toolId,
        toolType: toolType(req.toolId),
        effectKey,
        attempt: info.attempt,
        recoveryPath: 'reconcile',
      };
      return withToolSpan(span, async (s) => {
        const answer = await tool.reconcile!(ctx, ctx.idempotencyKey);
        s.setAttribute('toolplane.reconcile.answer', answer.status);
        return answer.status === 'landed'
          ? { status: 'landed', output: jsonRoundTrip(req.toolId, answer.output) }
          : answer;
      });
    },
  };
}

export type ToolActivities = ReturnType<typeof createToolActivities>;
