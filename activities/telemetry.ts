// OpenTelemetry for real executions: activities never run during replay, so neither do these spans.
import { SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import {
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
  if (f.modelCallId && new TextEncoder().encode(f.modelCallId).length <= MAX_CALL_ID_BYTES)
    attributes['gen_ai.tool.call.id'] = f.modelCallId;
  return tracer().startActiveSpan(
    `${f.operation} ${f.toolId}`,
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
