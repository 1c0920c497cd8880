// Workflow-safe: a fixed list of tool calls, no model and no data-flow gate: the durable tool call on
// its own, for tests and internals. A worker serves it only when its configuration says so
// (`allowUngovernedToolRun`); otherwise the worker refuses the run before anything happens.
import { patched } from '@temporalio/workflow';
import type { Manifest } from '../catalog/manifest';
import { ALLOW_ALL } from '../catalog/policy';
import { ToolCatalog } from '../catalog/tool-catalog';
import { Patch } from '../common/names';
import { refuseMalformedInput } from './input-check';
import type { JournalEntry } from './journal';
import { StepCtx } from './step-ctx';
import { StepError } from './step-error';

export interface ToolRunInput {
  principal: string;
  /** Tools the run asks for (default: every tool the worker lets this principal have). */
  grants?: string[];
  calls: { toolId: string; args: unknown }[];
  /** Stop at the first failed call (default) or go on. */
  continueOnError?: boolean;
  capabilities?: string[];
  manifestDigest?: string;
  /** How many delegations deep this run is (a subagent's call runs one level below its parent). */
  delegationDepth?: number;
  /** @deprecated Ignored: the worker's manifest governs. Read only when replaying older runs. */
  manifest?: Manifest;
}

export interface ToolRunResult {
  status: 'completed' | 'failed';
  outputs: unknown[];
  journal: JournalEntry[];
}

export async function toolRun(input: ToolRunInput): Promise<ToolRunResult> {
  refuseMalformedInput('toolRun', input);
  const step =
    patched(Patch.LocalAuthority) || patched(Patch.WorkerAuthority)
      ? await StepCtx.open({
          principal: input.principal,
          grants: input.grants,
          capabilities: input.capabilities,
          manifestDigest: input.manifestDigest,
          ungoverned: true,
        })
      : new StepCtx({
          catalog: ToolCatalog.fromManifest(input.manifest!, input.grants ?? []),
          principal: input.principal,
          grants: input.grants ?? [],
          policy: ALLOW_ALL,
          capabilities: input.capabilities,
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
