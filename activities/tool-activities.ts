// The tool activity: performs one call, at most once per idempotency key as far as the tool honours it.
import { createHmac } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { FailureType } from '../catalog/failure-types';
import type { Safety } from '../catalog/manifest';
import type { Policy } from '../catalog/policy';
import { idempotencyKey } from '../workflows/effect-key';
import { ctxFromActivity } from './ctx';
import { withToolSpan, type GenAiToolType } from './telemetry';
import type { LedgerRef, Reconciliation, Tool } from './tool';
import { ToolError } from './tool-errors';
import type { ToolRegistry } from './tool-registry';

/** Kept small: it is written to history once per call. */
export interface PerformRequest {
  toolId: string;
  args: Record<string, unknown>;
  effectKey: string;
  position: number;
  principal: string;
  safety: Safety;
  requiresLedger?: boolean;
  budget?: { remainingCalls?: number; remainingCostMicros?: number };
  /** Omitted when the run allows every granted tool. */
  policy?: Policy;
  /** The model's tool-call id this execution answers (telemetry only). */
  modelCallId?: string;
  /** Set on a resend: which recovery path sent it again. */
  recoveryPath?: string;
}

export interface PerformResult {
  output: unknown;
}

export interface ReconcileRequest {
  toolId: string;
  effectKey: string;
  principal: string;
}

export interface ToolActivityDeps {
  registry: ToolRegistry;
  /** How a tool is served, for `gen_ai.tool.type`; in-process tools by default. */
  toolType?: (toolId: string) => GenAiToolType;
  /** Signs `produced_by` references; a worker without one cannot serve `requires_ledger` tools. */
  ledgerSecret?: string;
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

function toFailure(err: unknown, safety: Safety): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof ToolError) return ApplicationFailure.create({ type: err.type, message: err.message, details: err.details === undefined ? [] : [err.details] });
  // Tool code that threw something untyped may have sent the request already.
  const type = safety === 'read_only' ? FailureType.Rejected : FailureType.InDoubt;
  return ApplicationFailure.create({ type, message: `${(err as Error)?.message ?? String(err)} (untyped error from tool code)` });
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

  return {
    async performTool(req: PerformRequest): Promise<PerformResult> {
      const tool = lookup(req.toolId);
      const info = Context.current().info;
      const ctx = ctxFromActivity({ ...req, idempotencyKey: keyFor(req.effectKey) });
      const span = { operation: 'execute_tool' as const, toolId: req.toolId, toolType: deps.toolType?.(req.toolId) ?? 'function', effectKey: req.effectKey, attempt: info.attempt, recoveryPath: req.recoveryPath ?? 'none', modelCallId: req.modelCallId };
      return withToolSpan(span, async () => {
        try {
          let output: unknown;
          if (tool.callWithLedger) {
            let producedBy: LedgerRef | undefined;
            if (deps.ledgerSecret) {
              const run = info.workflowExecution;
              producedBy = signLedgerRef(deps.ledgerSecret, { workflowId: run?.workflowId ?? '', runId: run?.runId ?? '', effectKey: req.effectKey });
            } else if (req.requiresLedger) {
              throw ApplicationFailure.nonRetryable(`${req.toolId} requires ledger provenance and this worker has no ledger secret`, FailureType.Unavailable);
            }
            output = await tool.callWithLedger(ctx, req.args, producedBy);
          } else {
            output = await tool.call(ctx, req.args);
          }
          return { output: jsonRoundTrip(req.toolId, output) };
        } catch (err) {
          throw toFailure(err, req.safety);
        }
      });
    },

    async reconcileTool(req: ReconcileRequest): Promise<Reconciliation> {
      const tool = lookup(req.toolId);
      if (!tool.reconcile) throw ApplicationFailure.nonRetryable(`${req.toolId} cannot reconcile`, FailureType.Unavailable);
      const ctx = ctxFromActivity({ ...req, idempotencyKey: keyFor(req.effectKey) });
      const span = { operation: 'reconcile_tool' as const, toolId: req.toolId, toolType: deps.toolType?.(req.toolId) ?? 'function', effectKey: req.effectKey, attempt: Context.current().info.attempt, recoveryPath: 'reconcile' };
      return withToolSpan(span, async (s) => {
        const answer = await tool.reconcile!(ctx, ctx.idempotencyKey);
        s.setAttribute('toolplane.reconcile.answer', answer.status);
        return answer.status === 'landed' ? { status: 'landed', output: jsonRoundTrip(req.toolId, answer.output) } : answer;
      });
    },
  };
}

export type ToolActivities = ReturnType<typeof createToolActivities>;
