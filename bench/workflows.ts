// Workflow-safe: the two sides of the benchmark, the same calls made two ways.
import { proxyActivities } from '@temporalio/workflow';
import type { Manifest } from '../catalog/manifest';
import { ALLOW_ALL } from '../catalog/policy';
import { ToolCatalog } from '../catalog/tool-catalog';
import { StepCtx } from '../workflows/step-ctx';
import type { BenchActivities } from './activities';

export interface BenchInput {
  calls: number;
  manifest: Manifest;
}

const { plainLookup } = proxyActivities<BenchActivities>({ startToCloseTimeout: '10s' });

function argsFor(i: number) {
  return { email: ['alice@example.com', 'bob@example.com', 'chen@example.com'][i % 3]! };
}

/** The baseline: a hand-written activity, no catalogue, no key, no recovery. */
export async function plainCalls(input: BenchInput): Promise<number> {
  let n = 0;
  for (let i = 0; i < input.calls; i++) if (await plainLookup(argsFor(i))) n++;
  return n;
}

export async function toolplaneCalls(input: BenchInput): Promise<number> {
  const step = new StepCtx({
    catalog: ToolCatalog.fromManifest(input.manifest, ['tool://crm/lookup_customer']),
    principal: 'agent:bench',
    grants: ['tool://crm/lookup_customer'],
    policy: ALLOW_ALL,
  });
  let n = 0;
  for (let i = 0; i < input.calls; i++) if (await step.callTool('tool://crm/lookup_customer', argsFor(i))) n++;
  return n;
}
