// Workflow-safe: a fixed list of tool calls, no model and no data-flow gate: the durable tool call on
// its own, for tests and internals. A worker serves it only when its configuration says so
// (`allowUngovernedToolRun`); otherwise the worker refuses the run before anything happens.
import { refuseMalformedInput } from './input-check';
import type { JournalEntry } from '../common/journal';
import { StepCtx } from './step-ctx';
import { StepError } from './step-error';
import type { ToolRunInputShape } from '../common/run-input';

/** A tool run's input, derived from the schema both the client and the run check it with (common/run-input.ts). */
export type ToolRunInput = ToolRunInputShape;

export interface ToolRunResult {
  status: 'completed' | 'failed';
  outputs: unknown[];
  journal: JournalEntry[];
}

export async function toolRun(input: ToolRunInput): Promise<ToolRunResult> {
  refuseMalformedInput('toolRun', input);
  const step = await StepCtx.open({
    principal: input.principal,
    credential: input.credential,
    input,
    grants: input.grants,
    capabilities: input.capabilities,
    manifestDigest: input.manifestDigest,
    ungoverned: true,
  });

  const outputs: unknown[] = [];
  let status: ToolRunResult['status'] = 'completed';
  for (const c of input.calls) {
    try {
      outputs.push(await step.callTool(c.toolId, c.args));
    } catch (err) {
      if (!StepError.is(err)) {
        step.ended(err);
        throw err;
      }
      outputs.push({ error: { code: err.code, message: err.message, rule: err.rule } });
      status = 'failed';
      if (!input.continueOnError) break;
    }
  }
  step.releaseLeases();
  return { status, outputs, journal: step.ordered() };
}
