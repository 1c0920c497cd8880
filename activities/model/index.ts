// The model turn activity: one call to the worker-declared endpoint the run names, through its AI SDK
// provider (or the scripted model), traced as `chat {model}`.
import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { resolveModel, type ModelsDecl } from '../../catalog/authority';
import { durationMs } from '../../catalog/duration';
import { offeredDigest, type OfferedTool } from '../../catalog/tool-catalog';
import { offerName } from '../../catalog/tool-id';
import type { ToolDecl } from '../../catalog/manifest';
import { scopeReadableBy } from '../../common/stored-output';
import { asFinalRefusal } from '../catalog-failure';
import { BlobNotFound, FileBlobStore, type BlobStore } from '../blob-store';
import { aiSdkTurn } from './ai-sdk-turn';
import { ModelFailure, toApplicationFailure } from './model-failure';
import { languageModelFor, providerName } from './providers';
import { scriptedTurn, scriptedTurnAt } from './scripted';
import { TokenPublisher } from './token-stream';
import { TranscriptStore, TranscriptUnavailable, type TranscriptSegment } from './transcript';
import type { ModelTurnRequest } from './types';
import { modelPermit } from '../../common/ticket';
import { checkTicket } from '../identity/ticket-check';
import type { TicketIssuer } from '../identity/tickets';
import {
  scriptedCallId,
  type ChatMessage,
  type ModelActivities,
  type ModelTurnAnswer,
  type ModelTurnInput,
  type ModelTurnResult,
} from '../../common/wire';
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

const invalid = (message: string) =>
  ApplicationFailure.create({ type: ModelFailureType.RequestInvalid, message, nonRetryable: true });

/** What the model activity shares across turns: the worker's endpoints, stores and ticket check. */
interface ModelWorker {
  deps: ModelActivityDeps;
  blobs: BlobStore;
  transcripts: TranscriptStore;
}

type ResolvedModel = ReturnType<typeof resolveModel>;
type TurnByReference = Awaited<ReturnType<typeof byReference>>;

/** The offers a first turn names by identity, from this worker's own declarations (as `ToolCatalog.offered` makes them). */
function offersOf(w: ModelWorker, ids: readonly string[]): OfferedTool[] {
  return ids.map((id) => {
    const decl = w.deps.tools?.find((t) => t.id === id);
    if (!decl) throw invalid(`a run's first model turn offers ${id}, which this worker does not declare`);
    return { toolId: id, name: offerName(id), description: decl.description, inputSchema: decl.input_schema };
  });
}

/**
 * A turn by reference: the conversation so far from the run's transcript, plus what is new.
 * The scripted model needs only where the conversation stands, so nothing is expanded for it.
 */
async function byReference(w: ModelWorker, turn: ModelTurnInput, scope: string) {
  const digest = turn.toolsDigest;
  let prev: TranscriptSegment | undefined;
  let contextRef: string;
  if (turn.transcript) {
    prev = await w.transcripts.segment(turn.transcript, scope);
    contextRef = prev.context;
  } else {
    const tools = turn.tools ?? (turn.offered ? offersOf(w, turn.offered) : undefined);
    if (!tools || digest === undefined || offeredDigest(tools) !== digest)
      throw invalid(
        `a run's first model turn names the offered tools and their digest (${digest}), ` +
          "and this worker's declarations of them have that digest",
      );
    contextRef = await w.transcripts.startContext({ tools, toolsDigest: digest, script: turn.model.script }, scope);
  }
  const context = await w.transcripts.context(contextRef, scope);
  // A later turn names no digest (older runs name it on every turn): its transcript's is the run's.
  if (digest !== undefined && context.toolsDigest !== digest)
    throw invalid(`the turn names tools ${digest}, but the run's conversation offers ${context.toolsDigest}`);
  const newChars = JSON.stringify(turn.messages).length;
  return {
    context,
    contextRef,
    prev,
    newChars,
    turns: prev?.turns ?? 0,
    inputTokens: Math.ceil(((prev?.chars ?? 0) + newChars) / 4) + Math.ceil(JSON.stringify(context.tools).length / 4),
    messages: async () => [
      ...(turn.transcript ? await w.transcripts.messages(turn.transcript, scope) : []),
      ...turn.messages,
    ],
  };
}

/** One turn's answer: played from a script, or asked of the endpoint's model (its text streamed as written). */
async function answer(
  w: ModelWorker,
  turn: ModelTurnInput,
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

/** The run's conversation, one turn longer: its new segment's reference goes back with the result. */
async function appendTurn(
  w: ModelWorker,
  turn: ModelTurnInput,
  ref: TurnByReference,
  result: ModelTurnAnswer,
): Promise<ModelTurnAnswer> {
  const scope = Context.current().info.workflowExecution?.workflowId ?? '';
  const { responseModel, responseId, finishReason } = result;
  const response = { responseModel, responseId, finishReason };
  const transcript = await w.transcripts.append(
    {
      context: ref.contextRef,
      prev: turn.transcript,
      turns: ref.turns + 1,
      chars: (ref.prev?.chars ?? 0) + ref.newChars + JSON.stringify(result.message).length,
      messages: [...turn.messages, result.message],
      // What the provider said of its reply stays with it, for audit; the result in history leaves it out.
      ...(responseModel || responseId || finishReason ? { response } : {}),
    },
    scope,
  );
  return { ...result, transcript };
}

/**
 * The answer as history records it (see `ModelTurnResult`): what the run restores is left out. A
 * turn kept by reference only: without a transcript the provider's fields have nowhere else to stay.
 */
function recorded(answer: ModelTurnAnswer, scripted: boolean, turnIndex: number | undefined): ModelTurnResult {
  if (!answer.transcript) return answer;
  const { role: _role, content, toolCalls } = answer.message;
  const calls = toolCalls?.map((c, i) =>
    scripted && turnIndex !== undefined && c.id === scriptedCallId(turnIndex, i)
      ? { name: c.name, arguments: c.arguments }
      : c,
  );
  return {
    message: { ...(content ? { content } : {}), ...(calls?.length ? { toolCalls: calls } : {}) },
    usage: answer.usage,
    transcript: answer.transcript,
  };
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

async function takeTurn(w: ModelWorker, turn: ModelTurnInput): Promise<ModelTurnResult> {
  await checkTicket(w.deps.tickets, turn, modelPermit(turn.model.endpoint), RunFailureType.ModelRefused);
  const resolved = asFinalRefusal(() => resolveModel(w.deps.models, turn.model));
  const scope = Context.current().info.workflowExecution?.workflowId ?? '';
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
      const tokens = turn.stream ? TokenPublisher.forTurn(turn.stream.turn) : undefined;
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
