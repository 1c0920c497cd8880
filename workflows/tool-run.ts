// Workflow-safe: a fixed list of tool calls, no model and no data-flow gate: the durable tool call on
// its own, for tests and internals. A worker serves it only when its configuration says so
// (`allowUngovernedToolRun`); otherwise the worker refuses the run before anything happens.
import { refuseMalformedInput } from './input-check';
import type { JournalEntry } from '../common/journal';
import { StepCtx } from './step-ctx';
import { StepError } from './step-error';

export interface ToolRunInput {
  /** Who the run asks to act as; with a credential it may be left out. */
  principal?: string;
  /** The run's credential (a JWT bound to its workflow id), as for agentRun. */
  credential?: string;
  /** Tools the run asks for (default: every tool the worker lets this principal have). */
  grants?: string[];
  calls: { toolId: string; args: unknown }[];
  /** Stop at the first failed call (default) or go on. */
  continueOnError?: boolean;
  capabilities?: string[];
  manifestDigest?: string;
  /** How many delegations deep this run is (a subagent's call runs one level below its parent). */
  delegationDepth?: number;
}

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
