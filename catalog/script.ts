// Workflow-safe: the shape of a scripted model's turns, whether a run sends them or the worker declares them.
import { z } from 'zod';

const nonEmpty = z.string().min(1, 'must not be empty');

/** A scripted model's turn: tool calls with literal arguments, or a final answer. */
export const ScriptTurnShape = z
  .union(
    [
      z.looseObject({
        tool_calls: z
          .array(
            z.looseObject({
              name: nonEmpty.describe("The tool's name as the model sees it, such as crm__lookup_customer."),
              arguments: z.unknown().describe("The call's arguments, literally."),
              id: z.string().optional().describe("The model's tool-call id."),
            }),
          )
          .describe('The tool calls the model asks for in this turn.'),
      }),
      z.looseObject({ final: z.string().describe('The final answer; the run ends with it.') }),
    ],
    { error: 'each turn must be { "tool_calls": [{ "name", "arguments" }] } or { "final": "<answer>" }' },
  )
  .describe('One scripted model turn: tool calls with literal arguments, or a final answer.');
