// The model turn activity: one call to the worker-declared endpoint the run names, through its AI SDK
// provider (or the scripted model), traced as `chat {model}`.
import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { resolveModel, type ModelsDecl } from '../../catalog/authority';
import { durationMs } from '../../catalog/duration';
import type { ToolDecl } from '../../catalog/manifest';
import { scopeReadableBy } from '../../common/stored-output';
import { asFinalRefusal } from '../catalog-failure';
import { BlobNotFound, FileBlobStore, type BlobStore } from '../blob-store';
import { aiSdkTurn } from './ai-sdk-turn';
import { ModelFailure, toApplicationFailure } from './model-failure';
import { languageModelFor, providerName } from './providers';
import { scriptedTurn, scriptedTurnAt } from './scripted';
import { TokenPublisher } from './token-stream';
import { TranscriptStore, TranscriptUnavailable } from './transcript';
import {
  appendTurn,
  byReference,
  recorded,
  written,
  type ModelWorker,
  type Turn,
  type TurnByReference,
} from './conversation';
import type { ModelTurnRequest } from './types';
import { modelPermit } from '../../common/ticket';
import { checkTicket } from '../identity/ticket-check';
import { permitFromOpening } from '../identity/run-opening';
import type { TicketIssuer } from '../identity/tickets';
import type { ChatMessage, ModelActivities, ModelTurnAnswer, ModelTurnInput, ModelTurnResult } from '../../common/wire';
import { ModelFailureType, RunFailureType } from '../../catalog/failure-types';

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
  /** Where the runs' conversations are kept between turns (default: `blobs`). */
  transcripts?: BlobStore;
  /** Checks the run's ticket for the endpoint it names: only a run this worker authorized reaches a model. */
  tickets: TicketIssuer;
  /** The worker's tool declarations (the manifest's `tools`): a first turn names the offered ones by identity. */
  tools?: readonly ToolDecl[];
}

/**
 * The largest answer a turn records: the result is written to history, whose payloads Temporal
 * refuses above 2 MB, and such a refusal would only surface as a timeout after retries.
 */
export const MAX_MODEL_OUTPUT_BYTES = 1024 * 1024;

function refuseOversized(result: ModelTurnAnswer, where: string): void {
  const bytes = Buffer.byteLength(JSON.stringify(result.message), 'utf8');
  if (bytes > MAX_MODEL_OUTPUT_BYTES)
    throw ApplicationFailure.create({
      type: ModelFailureType.OutputTooLarge,
      message: `${where} answered ${bytes} bytes, more than the ${MAX_MODEL_OUTPUT_BYTES} a turn may record; the turn is refused, not retried`,
      details: [{ bytes, limit: MAX_MODEL_OUTPUT_BYTES }],
      nonRetryable: true,
    });
}

/** How often a model turn heartbeats (the workflow's heartbeat timeout is 10 s). */
const HEARTBEAT_MS = 2000;

/** The scripted model writes its answer word by word, `delay` apart, as a streaming model would. */
async function writeScripted(text: string, delay: string | number | undefined, tokens: TokenPublisher): Promise<void> {
  const ms = delay === undefined ? 0 : durationMs(delay);
  for (const word of text.match(/\s*\S+\s*/g) ?? []) {
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    tokens.push(word);
  }
}

type ResolvedModel = ReturnType<typeof resolveModel>;

/** One turn's answer: played from a script, or asked of the endpoint's model (its text streamed as written). */
async function answer(
  w: ModelWorker,
  turn: Turn,
  resolved: ResolvedModel,
  ref: TurnByReference | undefined,
  tokens: TokenPublisher | undefined,
): Promise<ModelTurnAnswer> {
  const scope = Context.current().info.workflowExecution?.workflowId ?? '';
  const whole = async (): Promise<ModelTurnRequest> => ({
    model: turn.model,
    messages: await expandMessages(ref ? await ref.messages() : turn.messages, w.blobs, scope),
    tools: ref ? ref.context.tools : (turn.tools ?? []),
  });
  const decl = resolved.decl;
  const where = `model endpoint "${resolved.endpoint}" (${resolved.model})`;
  const declared = decl.provider === 'scripted' ? decl.script : undefined;
  const script = declared ?? turn.model.script ?? ref?.context.script ?? [];
  const result =
    decl.provider === 'scripted'
      ? ref
        ? scriptedTurnAt(script, ref.turns, ref.inputTokens)
        : scriptedTurn(script, await whole())
      : await aiSdkTurn(
          await languageModelFor(resolved.endpoint, decl, resolved.model),
          await whole(),
          where,
          Context.current().cancellationSignal,
          tokens && decl.stream === true ? (delta) => tokens.push(delta) : undefined,
        );
  // Without a pace the script's answer is there at once: `turn-completed` carries it, no tokens are sent.
  if (decl.provider === 'scripted' && tokens && decl.token_delay !== undefined)
    await writeScripted(result.message.content, decl.token_delay, tokens);
  refuseOversized(result, where);
  return result;
}

function recordUsage(span: Span, result: ModelTurnAnswer): void {
  const finish = result.finishReason ?? (result.message.toolCalls?.length ? 'tool_calls' : 'stop');
  span.setAttributes({
    'gen_ai.usage.input_tokens': result.usage.inputTokens,
    'gen_ai.usage.output_tokens': result.usage.outputTokens,
    ...(result.responseModel ? { 'gen_ai.response.model': result.responseModel } : {}),
    ...(result.responseId ? { 'gen_ai.response.id': result.responseId } : {}),
    'gen_ai.response.finish_reasons': [finish],
  });
}

/** A failed turn: its tokens abandoned, its span marked, the failure typed. */
function failedTurn(span: Span, err: unknown, tokens: TokenPublisher | undefined): unknown {
  tokens?.abandon();
  const failure = err instanceof ModelFailure ? toApplicationFailure(err) : err;
  span.setAttribute('error.type', (failure as { type?: string }).type ?? (failure as Error).name ?? 'Error');
  span.setStatus({ code: SpanStatusCode.ERROR, message: (failure as Error).message });
  return failure;
}

/**
 * The turn's failures that no retry mends are final here, typed (the run's retry policy names no
 * types): a refused ticket or endpoint, an invalid request, an answer too large, a transcript that
 * cannot be read, and the model failures `FINAL_MODEL_FAILURES` lists.
 */
async function modelTurn(w: ModelWorker, turn: ModelTurnInput): Promise<ModelTurnResult> {
  try {
    return await takeTurn(w, turn);
  } catch (err) {
    if (err instanceof TranscriptUnavailable)
      throw ApplicationFailure.create({
        type: err.code,
        message: err.message,
        details: [err.data],
        nonRetryable: true,
      });
    throw err;
  }
}

/** A turn that names neither principal nor ticket acts under the run's first opening: both are read from there. */
async function presentedTurn(input: ModelTurnInput): Promise<{ principal?: string; ticket?: string }> {
  if (input.principal !== undefined || input.ticket !== undefined) return input;
  const run = Context.current().info.workflowExecution ?? { workflowId: '', runId: '' };
  const opened = await permitFromOpening(run, undefined, modelPermit(input.model.endpoint)).catch((err: unknown) => {
    // Nothing was asked of the model: a retry may find the history readable.
    throw ApplicationFailure.retryable(
      `the run's opening could not be read from its history (${(err as Error).message}); the model was not asked`,
      RunFailureType.ModelRefused,
    );
  });
  return opened ? { principal: opened.principal, ticket: opened.mac } : {};
}

async function takeTurn(w: ModelWorker, input: ModelTurnInput): Promise<ModelTurnResult> {
  await checkTicket(
    w.deps.tickets,
    await presentedTurn(input),
    modelPermit(input.model.endpoint),
    RunFailureType.ModelRefused,
  );
  const resolved = asFinalRefusal(() => resolveModel(w.deps.models, input.model));
  const scope = Context.current().info.workflowExecution?.workflowId ?? '';
  const turn = await written(w, input, scope);
  // By reference: a first turn names its tools' digest, a later one its transcript (older runs: both).
  const ref =
    turn.toolsDigest !== undefined || turn.transcript !== undefined ? await byReference(w, turn, scope) : undefined;
  const decl = resolved.decl;
  const attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.conversation.id': scope,
    'gen_ai.provider.name': decl.provider === 'scripted' ? 'toolplane.scripted' : providerName(decl),
    'gen_ai.request.model': resolved.model,
    ...(turn.model.temperature !== undefined ? { 'gen_ai.request.temperature': turn.model.temperature } : {}),
  };
  return trace
    .getTracer('toolplane')
    .startActiveSpan(`chat ${resolved.model}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      // The run's stream takes the text as it is written: a view; the result below is the record.
      const tokens = turn.stream ? TokenPublisher.forTurn(turn.stream.turn, w.deps.tickets) : undefined;
      // Alive while the model thinks, however long it takes: a lost worker is noticed by its silence.
      const activity = Context.current();
      const alive = setInterval(() => activity.heartbeat(), HEARTBEAT_MS);
      try {
        const result = await answer(w, turn, resolved, ref, tokens);
        await tokens?.close();
        recordUsage(span, result);
        const kept = ref ? await appendTurn(w, turn, ref, result) : result;
        return recorded(kept, decl.provider === 'scripted', ref?.turns);
      } catch (err) {
        throw failedTurn(span, err, tokens);
      } finally {
        clearInterval(alive);
        span.end();
      }
    });
}

export function createModelActivities(deps: ModelActivityDeps): ModelActivities {
  const blobs = deps.blobs ?? new FileBlobStore();
  const w: ModelWorker = { deps, blobs, transcripts: new TranscriptStore(deps.transcripts ?? blobs) };
  return { modelTurn: (turn) => modelTurn(w, turn) };
}
