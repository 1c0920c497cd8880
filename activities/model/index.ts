// The model turn activity: one call to the run's chosen model, traced as `chat {model}`.
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import { openaiTurn } from './openai';
import { scriptedTurn } from './scripted';
import { modelName, type ModelTurnRequest, type ModelTurnResult } from './types';

export function createModelActivities() {
  return {
    async modelTurn(req: ModelTurnRequest): Promise<ModelTurnResult> {
      const name = modelName(req.model);
      return trace.getTracer('toolplane').startActiveSpan(
        `chat ${name}`,
        { kind: SpanKind.CLIENT, attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': req.model.provider === 'openai' ? 'openai' : 'toolplane.scripted', 'gen_ai.request.model': name } },
        async (span) => {
          try {
            const result = req.model.provider === 'scripted' ? scriptedTurn(req.model.script, req) : await openaiTurn(req.model, req, Context.current().cancellationSignal);
            span.setAttributes({
              'gen_ai.usage.input_tokens': result.usage.inputTokens,
              'gen_ai.usage.output_tokens': result.usage.outputTokens,
              ...(result.responseModel ? { 'gen_ai.response.model': result.responseModel } : {}),
              'gen_ai.response.finish_reasons': [result.message.toolCalls?.length ? 'tool_calls' : 'stop'],
            });
            return result;
          } catch (err) {
            span.setAttribute('error.type', (err as { type?: string }).type ?? (err as Error).name);
            span.setStatus({ code: SpanStatusCode.ERROR });
            throw err;
          } finally {
            span.end();
          }
        },
      );
    },
  };
}

export type ModelActivities = ReturnType<typeof createModelActivities>;
