// The carried-content activity: before a send, asks the tool what the call would carry beside its
// arguments (bytes, sources, sensitivity), so the workflow can gate and count it.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { SENSITIVITY_LEVELS, type Manifest } from '../catalog/manifest';
import { shortDigest, toolDigest } from '../catalog/digest';
import { ctxFromActivity } from './ctx';
import type { CarriedActivities, CarriedContent, CarriedRequest } from '../common/wire';
import type { ToolRegistry } from './tool-registry';
import { toolPermit } from '../common/ticket';
import { checkTicket } from './identity/ticket-check';
import type { TicketIssuer } from './identity/tickets';
import { RunFailureType } from '../catalog/failure-types';

export interface CarriedActivityDeps {
  registry: ToolRegistry;
  /** The worker's own manifest: a run that declares the tool otherwise is refused. */
  manifest?: Manifest;
  tickets: TicketIssuer;
}

/** Every failure is final: a resolver that cannot say what leaves refuses the call. */
function refused(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, RunFailureType.CarriedUnresolved);
}

/** The tool's answer, checked: a whole number of bytes and a known sensitivity, or a refusal. */
function checked(toolId: string, c: CarriedContent | undefined): CarriedContent {
  if (!c || !Number.isSafeInteger(c.bytes) || c.bytes < 0)
    throw refused(`${toolId}: carried() returned no whole number of bytes`);
  if (!SENSITIVITY_LEVELS.includes(c.sensitivity))
    throw refused(`${toolId}: carried() returned an unknown sensitivity ${JSON.stringify(c.sensitivity)}`);
  const sources =
    Array.isArray(c.sources) && c.sources.every((s) => typeof s === 'string') && c.sources.length > 0
      ? c.sources
      : [toolId];
  return { bytes: c.bytes, sources, sensitivity: c.sensitivity };
}

export function createCarriedActivities(deps: CarriedActivityDeps): CarriedActivities {
  const declared = new Map((deps.manifest?.tools ?? []).map((t) => [t.id, shortDigest(toolDigest(t))]));
  return {
    async resolveCarried(req: CarriedRequest): Promise<CarriedContent> {
      await checkTicket(deps.tickets, req, toolPermit(req.toolId), RunFailureType.CarriedUnresolved);
      const tool = deps.registry.get(req.toolId);
      if (!tool?.carried)
        throw refused(`${req.toolId} has no carried() on this worker, so what it would carry is unknown`);
      const ours = declared.get(req.toolId);
      if (req.digest && ours && req.digest !== ours)
        throw refused(
          `the run declares ${req.toolId} otherwise than this worker's manifest (digest ${req.digest}, worker ${ours})`,
        );
      const info = Context.current().info;
      const ctx = ctxFromActivity({
        toolId: req.toolId,
        principal: req.principal,
        effectKey: info.activityId,
        idempotencyKey: `${info.workflowExecution?.workflowId ?? ''}/${info.activityId}`,
      });
      let content: CarriedContent;
      try {
        content = await tool.carried(ctx, req.args);
      } catch (err) {
        throw refused(`${req.toolId}: ${(err as Error)?.message ?? String(err)}`);
      }
      return checked(req.toolId, content);
    },
  };
}
