// The model turn activity's side of a run's conversation by reference: what a turn sends written out
// whole, the conversation's context and segments in the transcript store, and the result as history records it.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { offeredDigest, type OfferedTool } from '../../catalog/tool-catalog';
import { offerName } from '../../catalog/tool-id';
import { ModelFailureType } from '../../catalog/failure-types';
import type { BlobStore } from '../blob-store';
import type { TranscriptContext, TranscriptStore, TranscriptSegment } from './transcript';
import type { ModelActivityDeps } from './index';
import {
  scriptedCallId,
  type ChatMessage,
  type ModelTurnAnswer,
  type ModelTurnInput,
  type ModelTurnResult,
  type RecordedToolCall,
} from '../../common/wire';

export const invalid = (message: string) =>
  ApplicationFailure.create({ type: ModelFailureType.RequestInvalid, message, nonRetryable: true });

/** What the model activity shares across turns: the worker's endpoints, stores and ticket check. */
export interface ModelWorker {
  deps: ModelActivityDeps;
  blobs: BlobStore;
  transcripts: TranscriptStore;
}

export type TurnByReference = Awaited<ReturnType<typeof byReference>>;

/** A turn with what the model has not read written out whole (`messages`). */
export type Turn = ModelTurnInput & { messages: ChatMessage[] };

/**
 * A turn's tool results as the tool messages they stand for: the `i`-th answers the `i`-th call of the
 * reply the run's transcript ends with, and the model reads its value as JSON text (a stored output
 * as its envelope, expanded for the model like any stored message).
 */
export async function written(w: ModelWorker, turn: ModelTurnInput, scope: string): Promise<Turn> {
  const messages = turn.messages ?? [];
  if (!turn.results) return { ...turn, messages };
  const { values, stored = {} } = turn.results;
  const last = turn.transcript ? (await w.transcripts.segment(turn.transcript, scope)).messages.at(-1) : undefined;
  const calls = last?.role === 'assistant' ? (last.toolCalls ?? []) : [];
  if (!Array.isArray(values) || calls.length !== values.length)
    throw invalid(
      `a turn's tool results answer the calls of the reply its transcript ends with (${calls.length}), one each (${Array.isArray(values) ? values.length : 'none'})`,
    );
  const results = values.map((value, i): ChatMessage => {
    const envelope = Object.prototype.hasOwnProperty.call(stored, String(i)) ? stored[String(i)] : undefined;
    return envelope
      ? { role: 'tool', toolCallId: calls[i]!.id, content: envelope.preview, stored: envelope }
      : { role: 'tool', toolCallId: calls[i]!.id, content: JSON.stringify(value) };
  });
  return { ...turn, messages: [...results, ...messages] };
}

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
export async function byReference(w: ModelWorker, turn: Turn, scope: string) {
  const digest = turn.toolsDigest;
  let prev: TranscriptSegment | undefined;
  let contextRef: string;
  let context: TranscriptContext;
  // A first turn's context, while it is being stored (its segment is written beside it).
  let contextStored: Promise<unknown> | undefined;
  if (turn.transcript) {
    prev = await w.transcripts.segment(turn.transcript, scope);
    contextRef = prev.context;
    context = await w.transcripts.context(contextRef, scope);
  } else {
    const tools = turn.tools ?? (turn.offered ? offersOf(w, turn.offered) : undefined);
    if (!tools || digest === undefined || offeredDigest(tools) !== digest)
      throw invalid(
        `a run's first model turn names the offered tools and their digest (${digest}), ` +
          "and this worker's declarations of them have that digest",
      );
    const begun = await w.transcripts.startContext({ tools, toolsDigest: digest, script: turn.model.script }, scope);
    // The context as made here: a store still writing it is not read back.
    ({ ref: contextRef, context, stored: contextStored } = begun);
  }
  // A later turn names no digest (older runs name it on every turn): its transcript's is the run's.
  if (digest !== undefined && context.toolsDigest !== digest)
    throw invalid(`the turn names tools ${digest}, but the run's conversation offers ${context.toolsDigest}`);
  const newChars = JSON.stringify(turn.messages).length;
  return {
    context,
    contextRef,
    contextStored,
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

/** The run's conversation, one turn longer: its new segment's reference goes back with the result. */
export async function appendTurn(
  w: ModelWorker,
  turn: Turn,
  ref: TurnByReference,
  result: ModelTurnAnswer,
): Promise<ModelTurnAnswer> {
  const scope = Context.current().info.workflowExecution?.workflowId ?? '';
  const { responseModel, responseId, finishReason } = result;
  const response = { responseModel, responseId, finishReason };
  const segment = w.transcripts.append(
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
  // A first turn's segment is written while its context is stored; both are stored before the turn answers.
  const [, transcript] = await Promise.all([ref.contextStored, segment]);
  return { ...result, transcript };
}

/** The object a call's arguments are the exact JSON text of, if they are. */
function jsonObjectOf(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return JSON.stringify(value) === text ? (value as Record<string, unknown>) : undefined;
}

/**
 * The answer as history records it (see `ModelTurnResult`): what the run restores is left out. A
 * turn kept by reference only: without a transcript the provider's fields have nowhere else to stay.
 */
export function recorded(answer: ModelTurnAnswer, scripted: boolean, turnIndex: number | undefined): ModelTurnResult {
  if (!answer.transcript) return answer;
  const { role: _role, content, toolCalls } = answer.message;
  const calls = toolCalls?.map((c, i): RecordedToolCall => {
    const made = scripted && turnIndex !== undefined && c.id === scriptedCallId(turnIndex, i);
    const args = jsonObjectOf(c.arguments);
    const repeated = i > 0 && toolCalls[i - 1]!.name === c.name;
    return {
      ...(made ? {} : { id: c.id }),
      ...(repeated ? {} : { name: c.name }),
      ...(args ? { args } : { arguments: c.arguments }),
    };
  });
  return {
    message: { ...(content ? { content } : {}), ...(calls?.length ? { toolCalls: calls } : {}) },
    usage: answer.usage,
    transcript: answer.transcript,
  };
}
