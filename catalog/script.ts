// Workflow-safe: the shape of a scripted model's turns, whether a run sends them or the worker declares them.
import { z } from 'zod';

const nonEmpty = z.string().min(1, 'must not be empty');

/** A scripted model's turn: tool calls with literal arguments, or a final answer. */
export const ScriptTurnShape = z.union(
  [
    z.looseObject({
      tool_calls: z.array(z.looseObject({ name: nonEmpty, arguments: z.unknown(), id: z.string().optional() })),
    }),
    z.looseObject({ final: z.string() }),
  ],
  { error: 'each turn must be { "tool_calls": [{ "name", "arguments" }] } or { "final": "<answer>" }' },
);
