// Workflow-safe: a fixed list of tool calls, no model. The calls come from whoever started the run,
// so they are labelled like a prompt and pass the same gate as an agent's calls.
import { patched, upsertSearchAttributes } from '@temporalio/workflow';
import type { Manifest } from '../catalog/manifest';
import { ALLOW_ALL } from '../catalog/policy';
import { ToolCatalog } from '../catalog/tool-catalog';
import { Patch } from '../common/names';
import { TOOLS_CALLED } from '../common/search-attributes';
import { governanceGate } from './governance';
import type { JournalEntry } from './journal';
import { Budget, type Limits } from './limits';
import { Provenance, USER_PROMPT } from './provenance';
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
  limits?: Limits;
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
  const governed = patched(Patch.WorkerAuthority);
  const step = governed
    ? await StepCtx.open({ principal: input.principal, grants: input.grants, capabilities: input.capabilities, manifestDigest: input.manifestDigest })
    : new StepCtx({ catalog: ToolCatalog.fromManifest(input.manifest!, input.grants ?? []), principal: input.principal, grants: input.grants ?? [], policy: ALLOW_ALL, capabilities: input.capabilities });
  const budget = new Budget(input.limits ?? {}, Date.now(), input.delegationDepth ?? 0);
  const provenance = new Provenance();
  provenance.produce(input.calls.map((c) => c.args), { source: USER_PROMPT, trusted: true, callTrusted: true, sensitivity: 'internal' });
  const offered = step.catalog.offered(ALLOW_ALL);

  const outputs: unknown[] = [];
  let status: ToolRunResult['status'] = 'completed';
  const called = new Set<string>();
  for (const c of input.calls) {
    let callTrusted = false;
    try {
      const gate = governed ? governanceGate({ principal: input.principal, offer: offered.find((o) => o.toolId === c.toolId), budget, provenance, onAllowed: (t) => (callTrusted = t) }) : undefined;
      const output = await step.callTool(c.toolId, c.args, { gate });
      outputs.push(output);
      called.add(c.toolId);
      const decl = step.catalog.declared(c.toolId)?.decl;
      if (decl) provenance.produce(output, { source: c.toolId, trusted: false, callTrusted, sensitivity: decl.sensitivity.output });
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
