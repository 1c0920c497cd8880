// Workflow-safe: the sides of the benchmark, the same calls made each way.
import { proxyActivities } from '@temporalio/workflow';
import type { ToolDecl } from '../catalog/manifest';
import { ALLOW_ALL } from '../catalog/policy';
import { governanceGate } from '../workflows/gate/governance';
import { Budget } from '../workflows/gate/limits';
import { Provenance, USER_PROMPT } from '../workflows/gate/provenance';
import { StepCtx } from '../workflows/step-ctx';
import type { BenchActivities } from './activities';

// The toolplane workflows, so one worker serves every side.
export { agentRun, toolRun, delegatedCall, mcpSession } from '../workflows/index';
// The gateway bench's baselines (bench/gateway.ts).
export { plainSession, handRolledCall } from './gateway-workflows';

const CRM = 'tool://crm/lookup_customer';

export interface BenchInput {
  calls: number;
  /** The CRM lookup's declaration, as the worker's manifest has it. */
  decl: ToolDecl;
}

export interface LoopInput {
  calls: number;
  perTurn: number;
}

const { plainLookup, benchModelTurn } = proxyActivities<BenchActivities>({ startToCloseTimeout: '30s' });

function argsFor(i: number) {
  return { email: ['alice@example.com', 'bob@example.com', 'chen@example.com'][i % 3]! };
}

/** The baseline: a hand-written activity, no catalogue, no key, no recovery. */
export async function plainCalls(input: BenchInput): Promise<number> {
  let n = 0;
  for (let i = 0; i < input.calls; i++) if (await plainLookup(argsFor(i))) n++;
  return n;
}

/**
 * The same calls through StepCtx.callTool with the real gate: the worker's answer and ticket (one local
 * activity per run), limits, data flow, provenance of every result.
 */
export async function toolplaneCalls(input: BenchInput): Promise<number> {
  const step = await StepCtx.open({ principal: 'agent:bench', grants: [input.decl.id] });
  const offer = step.catalog.offered(ALLOW_ALL)[0];
  const budget = new Budget({}, Date.now());
  const provenance = new Provenance();
  provenance.produce('Look up alice@example.com, bob@example.com and chen@example.com.', {
    source: USER_PROMPT,
    trusted: true,
    callTrusted: true,
    sensitivity: 'internal',
  });
  let n = 0;
  for (let i = 0; i < input.calls; i++) {
    let callTrusted = false;
    const output = await step.callTool(CRM, argsFor(i), {
      answering: offer,
      gate: governanceGate({
        principal: step.scope.principal,
        ticket: step.scope.ticket,
        offer,
        budget,
        provenance: provenance.snapshot(),
        onAllowed: (t) => (callTrusted = t),
      }),
    });
    provenance.produce(output, {
      source: CRM,
      trusted: false,
      callTrusted,
      sensitivity: input.decl.sensitivity.output,
    });
    if (output) n++;
  }
  return n;
}

/** A minimal agent loop written by hand: the model activity gets what is new, tools run as proxied activities. */
export async function handLoop(input: LoopInput): Promise<number> {
  let results: unknown[] = [];
  let made = 0;
  for (let turn = 0; ; turn++) {
    const calls = await benchModelTurn({ turn, calls: input.calls, perTurn: input.perTurn, results });
    if (calls.length === 0) return made;
    results = await Promise.all(calls.map((c) => plainLookup(c)));
    made += calls.length;
  }
}
