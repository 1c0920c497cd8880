// A deterministic model that plays a JSON script: the default for `npm start` and the tests.
import type { ModelTurnRequest } from './types';
import { scriptedCallId, type ModelTurnAnswer, type ScriptTurn } from '../../common/wire';

/** Rough token count, so budgets have something to count. */
function approxTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export function scriptedTurn(script: ScriptTurn[], req: ModelTurnRequest): ModelTurnAnswer {
  const turn = req.messages.filter((m) => m.role === 'assistant').length;
  return scriptedTurnAt(
    script,
    turn,
    approxTokens(JSON.stringify(req.messages)) + approxTokens(JSON.stringify(req.tools)),
  );
}

/** The script's `turn`-th reply, for a conversation of about `inputTokens` tokens. */
export function scriptedTurnAt(script: ScriptTurn[], turn: number, inputTokens: number): ModelTurnAnswer {
  const step = script[turn];
  if (!step)
    return {
      message: { role: 'assistant', content: '(the script has no more turns)' },
      usage: { inputTokens, outputTokens: 8 },
    };
  if ('final' in step)
    return {
      message: { role: 'assistant', content: step.final },
      usage: { inputTokens, outputTokens: approxTokens(step.final) },
    };
  const toolCalls = step.tool_calls.map((c, i) => ({
    id: c.id ?? scriptedCallId(turn, i),
    name: c.name,
    arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
  }));
  return {
    message: { role: 'assistant', content: '', toolCalls },
    usage: { inputTokens, outputTokens: approxTokens(JSON.stringify(toolCalls)) },
  };
}
