// The tool activity: performs one call, at most once per idempotency key as far as the tool honours it.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { FailureType, RunFailureType } from '../catalog/failure-types';
import { MCP_SESSION_WORKFLOW } from '../common/gateway-protocol';
import type { Manifest, Safety } from '../catalog/manifest';
import { shortDigest, toolDigest } from '../catalog/digest';
import { effectKeyOfActivityId, sendIndexOfActivityId } from '../common/effect-key';
import { workerIdempotencyKey } from './idempotency-key';
import type { StoredOutput } from '../common/stored-output';
import { DEFAULT_LARGE_OUTPUT_BYTES, FileBlobStore, offload, type BlobStore } from './blob-store';
import { LedgerSigner, publicKeysOf, type LedgerConfig, type LedgerPublicKeys } from '../ledger/keys';
import { argsDigest } from '../ledger/ref';
import type {
  PerformRequest,
  PerformResult,
  ReconcileRequest,
  Reconciliation,
  ToolActivities,
  ToolEvent,
} from '../common/wire';
import { toolPermit } from '../common/ticket';
import { ctxFromActivity } from './ctx';
import { checkTicket } from './identity/ticket-check';
import { presented, type Presented } from './identity/run-opening';
import type { TicketIssuer } from './identity/tickets';
import { withToolSpan, type GenAiToolType } from './telemetry';
import type { Tool } from './tool';
import { verifyCitations, type Citation } from './citations';
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
  return workerIdempotencyKey(Context.current().info.workflowExecution?.workflowId ?? '', effectKey);
}

/** What the tool activities share: the worker's dependencies and what it derives from them once. */
interface ToolWorker {
  deps: ToolActivityDeps;
  blobs: BlobStore;
  signer: LedgerSigner | undefined;
  publicKeys: LedgerPublicKeys | undefined;
  /** Each declared tool's digest, as this worker's manifest has it. */
  declared: Map<string, string>;
}

function lookup(w: ToolWorker, toolId: string): Tool {
  const tool = w.deps.registry.get(toolId);
  if (!tool) throw unavailable(toolId);
  return tool;
}

function toolType(w: ToolWorker, toolId: string): GenAiToolType {
  return w.deps.toolType?.(toolId) ?? (w.deps.registry.get(toolId)?.origin === 'extension' ? 'extension' : 'function');
}

/** The run's ticket, then the lease an extension tool needs; the workflow checked both, the worker checks again. */
async function assertAuthority(w: ToolWorker, req: PerformRequest | ReconcileRequest): Promise<void> {
  await checkTicket(w.deps.tickets, req, toolPermit(req.toolId), FailureType.Unavailable);
  if (!isExtensionTool(req.toolId)) return;
  if (!isLeaseFor(req.lease, req.toolId)) {
    throw ApplicationFailure.nonRetryable(
      `${req.toolId} needs the extension-runtime lease this run was granted (the lease is ${req.lease ?? 'missing'}); nothing was started`,
      FailureType.Unavailable,
    );
  }
}

/**
 * In an MCP session (the workflow type as Temporal reports it): only a call the gateway made, for this
 * session, key and tool. An update anyone else sent to the session performs nothing.
 */
function assertMcpCall(w: ToolWorker, req: PerformRequest): void {
  const info = Context.current().info;
  if (info.workflowType !== MCP_SESSION_WORKFLOW) return;
  const workflowId = info.workflowExecution?.workflowId ?? '';
  if (w.deps.tickets.madeCall(workflowId, req.toolId, req.mcpCall)) return;
  throw ApplicationFailure.nonRetryable(
    `${req.toolId} refused: the call carries no MAC (signature) the MCP gateway made for it and its arguments in session ${workflowId}; nothing was sent`,
    RunFailureType.IdentityRefused,
    { reason: 'bad_signature' },
  );
}

/** A call this worker must not send: the run declares the tool otherwise, or it needs a ledger key the worker lacks. */
function refuseUnservable(w: ToolWorker, req: PerformRequest): void {
  const ours = w.declared.get(req.toolId);
  if (req.digest && ours && req.digest !== ours) {
    throw ApplicationFailure.nonRetryable(
      `the run declares ${req.toolId} otherwise than this worker's manifest (digest ${req.digest}, worker ${ours}); nothing was sent`,
      FailureType.Unavailable,
    );
  }
  if (req.requiresLedger && !w.signer) {
    throw ApplicationFailure.nonRetryable(
      `${req.toolId} requires a signed produced_by and this worker has no ledger signing key; nothing was sent`,
      FailureType.Unavailable,
    );
  }
}

/** Calls the tool (with a signed `produced_by` when it records trusted state); its output as JSON, or a typed failure. */
async function callTool(
  w: ToolWorker,
  tool: Tool,
  ctx: ReturnType<typeof ctxFromActivity>,
  req: Presented<PerformRequest>,
  effectKey: string,
): Promise<unknown> {
  try {
    let output: unknown;
    if (tool.callWithLedger) {
      const producedBy = w.signer?.sign({
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
    return jsonRoundTrip(req.toolId, output);
  } catch (err) {
    throw toFailure(err, tool.def().safety, req);
  }
}

/** Keeps a large output out of history. The effect happened: a failure here is never a reason to resend. */
async function storeOutput(w: ToolWorker, req: PerformRequest, landed: unknown): Promise<StoredOutput | undefined> {
  try {
    return await offload(
      landed,
      w.blobs,
      w.deps.largeOutputBytes ?? DEFAULT_LARGE_OUTPUT_BYTES,
      Context.current().info.workflowExecution?.workflowId ?? '',
    );
  } catch (err) {
    throw ApplicationFailure.nonRetryable(
      `${req.toolId} landed, but its output could not be stored: ${(err as Error).message}`,
      FailureType.OutputUnstored,
    );
  }
}

/** The span attributes both tool activities set. */
function spanOf(w: ToolWorker, req: PerformRequest | ReconcileRequest, effectKey: string) {
  const info = Context.current().info;
  return {
    toolId: req.toolId,
    toolType: toolType(w, req.toolId),
    effectKey,
    // The call's try, as the tool's ctx.attempt: its sends before this one and this send's attempt.
    attempt: sendIndexOfActivityId(info.activityId) + info.attempt,
    description: w.deps.manifest.tools.find((t) => t.id === req.toolId)?.description,
    conversationId: info.workflowExecution?.workflowId,
  };
}

async function performTool(w: ToolWorker, sent: PerformRequest): Promise<PerformResult> {
  const req = await presented(sent);
  await assertAuthority(w, req);
  assertMcpCall(w, req);
  const tool = lookup(w, req.toolId);
  const effectKey = effectKeyOfActivityId(Context.current().info.activityId);
  refuseUnservable(w, req);
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
    ...spanOf(w, req, effectKey),
    recoveryPath: req.recoveryPath ?? 'none',
    modelCallId: req.modelCallId,
  };
  return withToolSpan(span, async () => {
    const landed = await callTool(w, tool, ctx, req, effectKey);
    const stored = await storeOutput(w, req, landed);
    const origins = citations.length
      ? await verifyCitations(citations, w.publicKeys, { principal: req.principal, manifest: w.deps.manifest })
      : [];
    return {
      ...(stored ? { stored } : { output: landed }),
      ...(events.length ? { events } : {}),
      ...(origins.length ? { origins } : {}),
    };
  });
}

async function reconcileTool(w: ToolWorker, sent: ReconcileRequest): Promise<Reconciliation> {
  const req = await presented(sent);
  await assertAuthority(w, req);
  const tool = lookup(w, req.toolId);
  if (!tool.reconcile) throw ApplicationFailure.nonRetryable(`${req.toolId} cannot reconcile`, FailureType.Unavailable);
  const effectKey = effectKeyOfActivityId(Context.current().info.activityId);
  const ctx = ctxFromActivity({ ...req, effectKey, idempotencyKey: keyFor(effectKey) });
  const span = { operation: 'reconcile_tool' as const, ...spanOf(w, req, effectKey), recoveryPath: 'reconcile' };
  return withToolSpan(span, async (s) => {
    const answer = await tool.reconcile!(ctx, ctx.idempotencyKey);
    s.setAttribute('toolplane.reconcile.answer', answer.status);
    return answer.status === 'landed' ? { status: 'landed', output: jsonRoundTrip(req.toolId, answer.output) } : answer;
  });
}

export function createToolActivities(deps: ToolActivityDeps): ToolActivities {
  const w: ToolWorker = {
    deps,
    blobs: deps.blobs ?? new FileBlobStore(),
    signer: deps.ledger ? new LedgerSigner(deps.ledger) : undefined,
    publicKeys: deps.ledger ? publicKeysOf(deps.ledger) : undefined,
    declared: new Map(deps.manifest.tools.map((t) => [t.id, shortDigest(toolDigest(t))])),
  };
  return {
    performTool: (req) => performTool(w, req),
    reconcileTool: (req) => reconcileTool(w, req),
  };
}
