// Workflow-safe: the run's span, made by the SDK's OpenTelemetry workflow interceptor, named and
// described after the GenAI conventions (`invoke_agent`); a refused or denied call leaves a span
// beneath it. Spans are no commands; the interceptor's sink exports them only outside replay.
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { workflowInfo } from '@temporalio/workflow';
import { nameOf } from '../catalog/tool-id';
import type { JournalEntry } from '../common/journal';

export const AGENT_NAME = 'toolplane';

/** Names the active run span `invoke_agent toolplane` (without the interceptor there is none, and nothing happens). */
export function nameRunSpan(principal: string): void {
  const span = trace.getActiveSpan();
  if (!span) return;
  span.updateName(`invoke_agent ${AGENT_NAME}`);
  span.setAttributes({
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': AGENT_NAME,
    'gen_ai.conversation.id': workflowInfo().workflowId,
    'toolplane.principal': principal,
  });
}

/** A call the gate refused or a person denied never reaches an activity: this span is its trace. */
export function recordRefusal(entry: JournalEntry, description?: string): void {
  if (entry.decision !== 'refused' && entry.decision !== 'denied') return;
  const span = trace.getTracer(AGENT_NAME).startSpan(`execute_tool ${nameOf(entry.toolId)}`, {
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': nameOf(entry.toolId),
      ...(description ? { 'gen_ai.tool.description': description } : {}),
      ...(entry.modelCallId ? { 'gen_ai.tool.call.id': entry.modelCallId } : {}),
      'gen_ai.conversation.id': workflowInfo().workflowId,
      'toolplane.tool.id': entry.toolId,
      'toolplane.decision': entry.decision,
      'toolplane.rule': entry.rule ?? 'unknown',
      ...(entry.decidedBy ? { 'toolplane.decided_by': entry.decidedBy } : {}),
      'error.type': entry.decision === 'denied' ? 'Denied' : 'Refused',
    },
  });
  span.setStatus({ code: SpanStatusCode.ERROR, message: entry.reason ?? entry.decision });
  span.end();
}
