// OpenTelemetry for real executions: activities never run during replay, so neither do these spans.
import { SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { Resource } from '@opentelemetry/resources';
import { NoopSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { nameOf } from '../catalog/manifest';

const tracer = () => trace.getTracer('toolplane');

/** GenAI semantic conventions: an in-process tool is a `function`, a tool served by another process an `extension`. */
export type GenAiToolType = 'function' | 'extension' | 'datastore';

/** A provider's call id longer than this is not recorded. */
const MAX_CALL_ID_BYTES = 256;

export interface ToolSpanFields {
  operation: 'execute_tool' | 'reconcile_tool';
  toolId: string;
  toolType: GenAiToolType;
  effectKey: string;
  attempt: number;
  recoveryPath: string;
  modelCallId?: string;
  /** The tool's description, as the model was offered it. */
  description?: string;
  /** The run (workflow id): the conversation the call belongs to. */
  conversationId?: string;
}

export async function withToolSpan<T>(f: ToolSpanFields, fn: (span: Span) => Promise<T>): Promise<T> {
  const attributes: Attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'toolplane.operation': f.operation,
    'gen_ai.tool.name': nameOf(f.toolId),
    'gen_ai.tool.type': f.toolType,
    'toolplane.tool.id': f.toolId,
    'toolplane.effect_key': f.effectKey,
    'toolplane.attempt': f.attempt,
    'toolplane.recovery_path': f.recoveryPath,
  };
  if (f.description) attributes['gen_ai.tool.description'] = f.description;
  if (f.conversationId) attributes['gen_ai.conversation.id'] = f.conversationId;
  if (f.modelCallId && new TextEncoder().encode(f.modelCallId).length <= MAX_CALL_ID_BYTES)
    attributes['gen_ai.tool.call.id'] = f.modelCallId;
  return tracer().startActiveSpan(
    `${f.operation} ${nameOf(f.toolId)}`,
    { kind: SpanKind.INTERNAL, attributes },
    async (span) => {
      try {
        return await fn(span);
      } catch (err) {
        const type = (err as { type?: string }).type ?? (err as Error).name ?? 'Error';
        span.setAttribute('error.type', type);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/** The SDK's activity interceptors: a RunActivity span around each activity, and trace ids in logs. */
export const activityTracing: ActivityInterceptorsFactory = (ctx) => ({
  inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
  outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
});

/** Where the spans the workflow interceptors make (inside the workflow sandbox) are exported. */
export interface WorkflowTracing {
  spanProcessor: SpanProcessor;
  resource?: Resource;
}

/** The sink the SDK's workflow interceptors export through; without tracing, spans are dropped there. */
export function workflowSpanSinks(tracing?: WorkflowTracing) {
  const processor: SpanProcessor = tracing?.spanProcessor ?? new NoopSpanProcessor();
  return {
    exporter: makeWorkflowExporter(processor, tracing?.resource ?? new Resource({ 'service.name': 'toolplane' })),
  };
}
