// Workflow-safe, step 2 of a call, its one question to the worker: what the call carries beside its
// arguments (an attachment named by id), asked with the arguments the gate admitted and handed to
// the gate as data. A call that references nothing carried never asks.
import { proxyActivities } from '@temporalio/workflow';
import { shortDigest } from '../../catalog/digest';
import { RunFailureType } from '../../catalog/failure-types';
import type { ToolCall } from '../../catalog/tool-call';
import { permitMac, toolPermit, type RunTicket } from '../../common/ticket';
import type { CarriedActivities } from '../../common/wire';
import type { CarriedResolution } from '../gate/governance';

const { resolveCarried } = proxyActivities<CarriedActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3, initialInterval: '200ms', nonRetryableErrorTypes: [RunFailureType.CarriedUnresolved] },
});

const messageOf = (err: unknown): string => {
  const e = err as { cause?: { message?: string }; message?: string };
  return e?.cause?.message ?? e?.message ?? String(err);
};

/** What the call would carry, as the worker's tool resolves it; a failure is an answer too (the gate refuses). */
export async function carriedBy(
  call: ToolCall,
  args: Record<string, unknown>,
  run: { principal: string; ticket: RunTicket },
): Promise<CarriedResolution> {
  try {
    const content = await resolveCarried({
      toolId: call.toolId,
      args,
      principal: run.principal,
      ticket: permitMac(run.ticket, toolPermit(call.toolId)) ?? '',
      digest: shortDigest(call.digest),
    });
    return { content };
  } catch (err) {
    return { unresolved: messageOf(err) };
  }
}
