// Workflow-safe, step 2 of a call: what the gate let through. The verdict's shape is the gate's
// (workflows/gate/verdict.ts); the pipeline reads it here.
import type { ToolCall } from '../../catalog/tool-call';
import type { GateVerdict } from '../gate/verdict';

export type { Gate, GateVerdict } from '../gate/verdict';

/** The arguments a verdict lets through. */
export function gatedArgs(call: ToolCall, verdict: GateVerdict | undefined): Record<string, unknown> {
  return verdict?.allow && verdict.args ? verdict.args : call.args;
}
