// The model turn activity: one call to the worker-declared endpoint the run names, through its AI SDK
// provider (or the scripted model), traced as `chat {model}`.
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import { resolveModel, type ModelsDecl } from '../../catalog/authority';
import { scopeReadableBy } from '../../common/stored-output';
import { asFinalRefusal } from '../catalog-failure';
import { BlobNotFound, FileBlobStore, type BlobStore } from '../blob-store';
import { aiSdkTurn } from './ai-sdk-turn';
import { ModelFailure, toApplicationFailure } from './model-failure';
import { languageModelFor, providerName } from './providers';
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
      const decl = resolved.decl;
      const provider = decl.provider === 'scripted' ? 'toolplane.scripted' : providerName(decl);
      const where = `model endpoint "${resolved.endpoint}" (${name})`;
      return trace.getTracer('toolplane').startActiveSpan(
        `chat ${name}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.provider.name': provider,
            'gen_ai.request.model': name,
            ...(turn.model.temperature !== undefined ? { 'gen_ai.request.temperature': turn.model.temperature } : {}),
          },
        },
        async (span) => {
          try {
            const result =
              decl.provider === 'scripted'
                ? scriptedTurn((turn.model.script ?? []) as ScriptTurn[], req)
                : await aiSdkTurn(
                    await languageModelFor(resolved.endpoint, decl, name),
                    req,
                    where,
                    Context.current().cancellationSignal,
                  );
            const finish = result.finishReason ?? (result.message.toolCalls?.length ? 'tool_calls' : 'stop');
            span.setAttributes({
              'gen_ai.usage.input_tokens': result.usage.inputTokens,
              'gen_ai.usage.output_tokens': result.usage.outputTokens,
              ...(result.responseModel ? { 'gen_ai.response.model': result.responseModel } : {}),
              ...(result.responseId ? { 'gen_ai.response.id': result.responseId } : {}),
              'gen_ai.response.finish_reasons': [finish],
            });
            return result;
          } catch (err) {
            const failure = err instanceof ModelFailure ? toApplicationFailure(err) : err;
            span.setAttribute('error.type', (failure as { type?: string }).type ?? (failure as Error).name ?? 'Error');
            span.setStatus({ code: SpanStatusCode.ERROR, message: (failure as Error).message });
            throw failure;
          } finally {
            span.end();
          }
        },
      );
    },
  };
}

export type ModelActivities = ReturnType<typeof createModelActivities>;
