// The model turn activity: one call to the run's chosen model, traced as `chat {model}`.
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import { openaiTurn } from './openai';
import { scriptedTurn } from './scripted';
import { expand, FileBlobStore, isBlobRef, type BlobStore } from '../blob-store';
import { modelName, type ChatMessage, type ModelTurnRequest, type ModelTurnResult } from './types';

/** Tool results stored outside history are read back here, so the model sees them whole. */
async function expandMessages(messages: ChatMessage[], blobs: BlobStore): Promise<ChatMessage[]> {
  return Promise.all(
    messages.map(async (m) => {
      if (m.role !== 'tool' || !m.content.includes('"$blob"')) return m;
      let parsed: unknown;
      try {
        parsed = JSON.parse(m.content);
      } catch {
        return m;
      }
      return isBlobRef(parsed) ? { ...m, content: JSON.stringify(await expand(parsed, blobs)) } : m;
    }),
  );
}

export function createModelActivities(deps: { blobs?: BlobStore } = {}) {
  const blobs = deps.blobs ?? new FileBlobStore();
  return {
    async modelTurn(turn: ModelTurnRequest): Promise<ModelTurnResult> {
      const req = { ...turn, messages: await expandMessages(turn.messages, blobs) };
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
