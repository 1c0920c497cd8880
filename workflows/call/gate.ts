// Workflow-safe, step 2 of a call: what the gate let through. The verdict's shape is the gate's
// (workflows/gate/verdict.ts); the pipeline reads it here.
import { patched } from '@temporalio/workflow';
import type { ToolCall } from '../../catalog/tool-call';
import type { GateVerdict } from '../gate/verdict';
import { Patch } from '../../common/names';

export type { Gate, GateVerdict } from '../gate/verdict';

/** The arguments a verdict lets through: an allowed call's, or those of a call a person may let through. */
export function gatedArgs(call: ToolCall, verdict: GateVerdict | undefined): Record<string, unknown> {
  return verdict?.args && (verdict.allow || verdict.askPerson) ? verdict.args : call.args;
}

/**
 * What the pipeline sends (workflow code only): the gated arguments, except in a run that reached a
 * call a person may overrule before such a call was sent as admitted (it replays as it ran).
 */
export function sentArgs(call: ToolCall, verdict: GateVerdict | undefined): Record<string, unknown> {
  const sent = gatedArgs(call, verdict);
  if (sent === call.args || verdict?.allow !== false) return sent;
  return patched(Patch.OverruledCallSendsGatedArgs) ? sent : call.args;
}
