// The tool activity: performs one call, at most once per idempotency key as far as the tool honours it.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { FailureType } from '../catalog/failure-types';
import { sharesFactsWith } from '../catalog/authority';
import type { Manifest, Safety } from '../catalog/manifest';
import { shortDigest, toolDigest } from '../catalog/digest';
import { effectKeyOfActivityId, idempotencyKey } from '../common/effect-key';
import type { StoredOutput } from '../common/stored-output';
import { DEFAULT_LARGE_OUTPUT_BYTES, FileBlobStore, offload, type BlobStore } from './blob-store';
import { LedgerSigner, publicKeysOf, type LedgerConfig, type LedgerPublicKeys } from '../ledger/keys';
import { argsDigest } from '../ledger/ref';
import { verifyProducedBy } from '../ledger/verify';
import type {
  CitedOrigin,
  PerformRequest,
  PerformResult,
  ReconcileRequest,
  Reconciliation,
  ToolActivities,
  ToolEvent,
} from '../common/wire';
import { leaves } from '../common/json-leaves';
import { toolPermit } from '../common/ticket';
import { ctxFromActivity } from './ctx';
import { checkTicket } from './identity/ticket-check';
import type { TicketIssuer } from './identity/tickets';
import { withToolSpan, type GenAiToolType } from './telemetry';
import type { LedgerRef, Tool } from './tool';
import { ToolError } from './tool-errors';
import type { ToolRegistry } from './tool-registry';
import { isLeaseFor } from '../catalog/lease-id';
import { isExtensionTool } from '../catalog/tool-id';

export interface ToolActivityDeps {
  registry: ToolRegistry;
  /** The worker's own manifest: it decides what a principal may reach and hold. */
  manifest: Manifest;
  /** Checks the ticket each request presents: only a run this worker authorized reaches a tool. */
  tickets: TicketIssuer;
  /** How a tool is served, for `gen_ai.tool.type`; in-process tools by default. */
  toolType?: (toolId: string) => GenAiToolType;
  /** Signs `produced_by` references; a worker without one cannot serve `requires_ledger` tools. */
  ledger?: LedgerConfig;
  /** Where outputs above `largeOutputBytes` go instead of history. */
  blobs?: BlobStore;
  largeOutputBytes?: number;
}

interface Citation {
  producedBy: LedgerRef | undefined;
  args: Record<string, unknown>;
}

/** Verifies what a tool cited; a reference that does not verify, or a verifier that fails, leaves its values untrusted. */
async function verifyCitations(
  citations: Citation[],
  publicKeys: LedgerPublicKeys | undefined,
  reader: { principal: string; manifest: Manifest },
): Promise<CitedOrigin[]> {
  const out: CitedOrigin[] = [];
  for (const c of citations) {
    const values = leaves(c.args)
      .map((l) => l.value)
      .filter((v): v is string | number => typeof v === 'string' || typeof v === 'number');
    if (!c.producedBy) {
      out.push({ values, trusted: false, reason: 'no produced_by' });
      continue;
    }
    if (!publicKeys) {
      out.push({ values, trusted: false, reason: 'this worker has no ledger keys to verify with' });
      continue;
    }
    try {
      const v = await verifyProducedBy(Context.current().client, c.producedBy, { publicKeys, args: c.args });
      if (!v.valid) {
        out.push({ values, trusted: false, reason: `${v.reason}: ${v.message}` });
        continue;
      }
      const o = v.origin;
      // A fact is its writer's words: trusted for another principal only where the writer shares it.
      const ours =
        o.principal === reader.principal || sharesFactsWith(reader.manifest.principals, o.principal, reader.principal);
      const reason = !o.trustedArgs
        ? 'the origin call had untrusted arguments'
        : !ours
          ? `written by ${o.principal}, who does not share facts with ${reader.principal}`
          : undefined;
      out.push({
        values,
        trusted: reason === undefined,
        origin: `${o.workflowId}/${o.runId}/${o.effectKey}`,
        principal: o.principal,
        ...(reason ? { reason } : {}),
      });
    } catch (err) {
      out.push({ values, trusted: false, reason: `could not verify: ${(err as Error).message}` });
    }
  }
  return out;
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

export function createToolActivities(deps: ToolActivityDeps): ToolActivities {
  const lookup = (toolId: string): Tool => {
    const tool = deps.registry.get(toolId);
    if (!tool) throw unavailable(toolId);
    return tool;
  };

  const blobs = deps.blobs ?? new FileBlobStore();
  const signer = deps.ledger ? new LedgerSigner(deps.ledger) : undefined;
  const publicKeys = deps.ledger ? publicKeysOf(deps.ledger) : undefined;
  const declared = new Map(deps.manifest.tools.map((t) => [t.id, shortDigest(toolDigest(t))]));
  /** The run's ticket, then the lease an extension tool needs; the workflow checked both, the worker checks again. */
  const assertAuthority = async (req: PerformRequest | ReconcileRequest): Promise<void> => {
    await checkTicket(deps.tickets, req, toolPermit(req.toolId), FailureType.Unavailable);
    if (!isExtensionTool(req.toolId)) return;
    if (!isLeaseFor(req.lease, req.toolId)) {
      throw ApplicationFailure.nonRetryable(
        `${req.toolId} needs the extension-runtime lease this run was granted (the lease is ${req.lease ?? 'missing'}); nothing was started`,
        FailureType.Unavailable,
      );
    }
  };
  const toolType = (toolId: string): GenAiToolType =>
    deps.toolType?.(toolId) ?? (deps.registry.get(toolId)?.origin === 'extension' ? 'extension' : 'function');

  return {
    async performTool(req: PerformRequest): Promise<PerformResult> {
      await assertAuthority(req);
      const tool = lookup(req.toolId);
      const info = Context.current().info;
      const effectKey = effectKeyOfActivityId(info.activityId);
      const ours = declared.get(req.toolId);
      if (req.digest && ours && req.digest !== ours) {
        throw ApplicationFailure.nonRetryable(
          `the run declares ${req.toolId} otherwise than this worker's manifest (digest ${req.digest}, worker ${ours}); nothing was sent`,
          FailureType.Unavailable,
        );
      }
      if (req.requiresLedger && !signer) {
        throw ApplicationFailure.nonRetryable(
          `${req.toolId} requires a signed produced_by and this worker has no ledger signing key; nothing was sent`,
          FailureType.Unavailable,
        );
      }
      const events: ToolEvent[] = [];
      const citations: Citation[] = [];
      const ctx = ctxFromActivity({
        ...req,
        effectKey,
        idempotencyKey: keyFor(effectKey),
        onEvent: (e) => events.push(e),
        onCite: (producedBy, args) => citations.push({ producedBy, args }),
      });
      const span = {
        operation: 'execute_tool' as const,
        toolId: req.toolId,
        toolType: toolType(req.toolId),
        effectKey,
        attempt: info.attempt,
        recoveryPath: req.recoveryPath ?? 'none',
        modelCallId: req.modelCallId,
        description: deps.manifest.tools.find((t) => t.id === req.toolId)?.description,
        conversationId: info.workflowExecution?.workflowId,
      };
      return withToolSpan(span, async () => {
        let landed: unknown;
        try {
          let output: unknown;
          if (tool.callWithLedger) {
            const producedBy = signer?.sign({
              v: 1,
              workflowId: ctx.workflowId,
              runId: ctx.runId,
              effectKey,
              toolId: req.toolId,
              principal: req.principal,
              argsDigest: argsDigest(req.args),
              decision: req.decision ?? 'ungoverned',
              trustedArgs: req.trustedArgs === true,
            });
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
        const origins = citations.length
          ? await verifyCitations(citations, publicKeys, { principal: req.principal, manifest: deps.manifest })
          : [];
        return {
          ...(stored ? { stored } : { output: landed }),
          ...(events.length ? { events } : {}),
          ...(origins.length ? { origins } : {}),
        };
      });
    },

    async reconcileTool(req: ReconcileRequest): Promise<Reconciliation> {
      await assertAuthority(req);
      const tool = lookup(req.toolId);
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
        description: deps.manifest.tools.find((t) => t.id === req.toolId)?.description,
        conversationId: info.workflowExecution?.workflowId,
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
