// The model turn activity: one call to the worker-declared endpoint the run names, traced as `chat {model}`.
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import { resolveModel, type ModelsDecl } from '../../catalog/authority';
import { scopeReadableBy } from '../../common/stored-output';
import { asFinalRefusal } from '../catalog-failure';
import { BlobNotFound, FileBlobStore, type BlobStore } from '../blob-store';
import { openaiTurn } from './openai';
import { scriptedTurn } from './scripted';
import type { ChatMessage, ModelTurnRequest, ModelTurnResult, ScriptTurn } from './types';

/**
 * Outputs stored outside history are read back here, so the model sees them whole. Only the
 * envelopes the tool activity created for this run are expanded; a missing blob is told to the
 * model instead of failing the run.
 */
async function expandMessages(messages: ChatMessage[], blobs: BlobStore, workflowId: string): Promise<ChatMessage[]> {
  return Promise.all(
    messages.map(async (m): Promise<ChatMessage> => {
      if (m.role !== 'tool' || !m.stored) return m;
      const { stored, ...plain } = m;
      if (!scopeReadableBy(stored.scope, workflowId))
        return {
          ...plain,
          content: JSON.stringify({ error: 'StoredOutputUnavailable', reason: 'the output was stored by another run' }),
        };
      try {
        return { ...plain, content: (await blobs.get(stored.ref, stored.scope)).toString('utf8') };
      } catch (err) {
        if (!(err instanceof BlobNotFound)) throw err;
        return {
          ...plain,
          content: JSON.stringify({ error: 'StoredOutputUnavailable', reason: err.message, preview: stored.preview }),
        };
      }
    }),
  );
}

export interface ModelActivityDeps {
  /** The worker's model endpoints (the manifest's `models`); a run names one. */
  models?: ModelsDecl;
  blobs?: BlobStore;
}

export function createModelActivities(deps: ModelActivityDeps = {}) {
  const blobs = deps.blobs ?? new FileBlobStore();
  return {
    async modelTurn(turn: ModelTurnRequest): Promise<ModelTurnResult> {
      const resolved = asFinalRefusal(() => resolveModel(deps.models, turn.model));
      const info = Context.current().info;
      const req = {
        ...turn,
        messages: await expandMessages(turn.messages, blobs, info.workflowExecution?.workflowId ?? ''),
      };
      const name = resolved.model;
      const provider = resolved.decl.provider === 'scripted' ? 'toolplane.scripted' : 'openai';
      return trace.getTracer('toolplane').startActiveSpan(
        `chat ${name}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.provider.name': provider,
            'gen_ai.request.model': name,
          },
        },
        async (span) => {
          try {
            const result =
              resolved.decl.provider === 'scripted'
                ? scriptedTurn((turn.model.script ?? []) as ScriptTurn[], req)
                : await openaiTurn(
                    { decl: resolved.decl, model: resolved.model, temperature: turn.model.temperature },
                    req,
                    Context.current().cancellationSignal,
                  );
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
