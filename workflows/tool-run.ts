// Workflow-safe: a fixed list of tool calls, no model. The durable tool call on its own.
import { upsertSearchAttributes } from '@temporalio/workflow';
import type { Manifest } from '../catalog/manifest';
import { ALLOW_ALL } from '../catalog/policy';
import { ToolCatalog } from '../catalog/tool-catalog';
import type { JournalEntry } from './journal';
import { StepCtx } from './step-ctx';
import { StepError } from './step-error';
import { TOOLS_CALLED } from './search-attributes';

export interface ToolRunInput {
  manifest: Manifest;
  grants: string[];
  principal: string;
  calls: { toolId: string; args: unknown }[];
  /** Stop at the first failed call (default) or go on. */
  continueOnError?: boolean;
  capabilities?: string[];
  /** How many delegations deep this run is (a subagent's call runs one level below its parent). */
  delegationDepth?: number;
}

export interface ToolRunResult {
  status: 'completed' | 'failed';
  outputs: unknown[];
  journal: JournalEntry[];
}

export async function toolRun(input: ToolRunInput): Promise<ToolRunResult> {
  const catalog = ToolCatalog.fromManifest(input.manifest, input.grants);
  const step = new StepCtx({ catalog, principal: input.principal, grants: input.grants, policy: ALLOW_ALL, capabilities: input.capabilities });
  const outputs: unknown[] = [];
  let status: ToolRunResult['status'] = 'completed';
  const called = new Set<string>();
  for (const c of input.calls) {
    try {
      outputs.push(await step.callTool(c.toolId, c.args));
      called.add(c.toolId);
    } catch (err) {
      if (!StepError.is(err)) throw err;
      outputs.push({ error: { code: err.code, message: err.message, rule: err.rule } });
      status = 'failed';
      if (!input.continueOnError) break;
    }
  }
  step.releaseLeases();
  if (called.size > 0) upsertSearchAttributes([{ key: TOOLS_CALLED, value: [...called] }]);
  return { status, outputs, journal: step.ordered() };
}
