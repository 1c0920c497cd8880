/**
 * `npm run bench -- --long`: one scripted agentRun of 10,000 tool calls. It must complete, every
 * history of its chain of continued runs must stay under 10 MB, and each must replay with the
 * current code.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import type { ScriptTurn } from '../common/wire';
import { manifestDigest } from '../catalog/digest';
import type { Manifest } from '../catalog/manifest';
import type { AgentRunInput, AgentRunResult } from '../workflows/agent/run';

type Event = temporal.api.history.v1.IHistoryEvent;

export interface LongFigures {
  calls: number;
  callsPerTurn: number;
  status: string;
  runs: number;
  seconds: number;
  maxHistoryBytes: number;
  maxHistoryEvents: number;
  historyBytes: number[];
  replayed: boolean;
  goals: { completes: boolean; everyHistoryUnder10MB: boolean; everyHistoryReplays: boolean };
}

const EMAILS = ['alice@example.com', 'bob@example.com', 'chen@example.com'];

export function lookups(calls: number, perTurn: number): ScriptTurn[] {
  const turns: ScriptTurn[] = [];
  for (let done = 0; done < calls; done += perTurn) {
    const n = Math.min(perTurn, calls - done);
    turns.push({
      tool_calls: Array.from({ length: n }, (_, i) => ({
        name: 'crm__lookup_customer',
        arguments: { email: EMAILS[(done + i) % 3] },
      })),
    });
  }
  turns.push({ final: 'done' });
  return turns;
}

/** The scripted endpoint the bench worker declares for a run of `calls` lookups. */
export const lookupsEndpoint = (calls: number, perTurn: number) => `lookups-${calls}-${perTurn}`;

/**
 * The bench worker's manifest: the example's, plus a scripted endpoint per run size. The worker
 * plays the model, as the hand loop's and `@temporalio/ai-sdk`'s model activities do, so no side's
 * history carries the script.
 */
export function benchManifest(manifest: Manifest, runs: [calls: number, perTurn: number][]): Manifest {
  const played = runs.map(([calls, perTurn]) => [
    lookupsEndpoint(calls, perTurn),
    { provider: 'scripted' as const, script: lookups(calls, perTurn) },
  ]);
  return { ...manifest, models: { ...manifest.models, ...Object.fromEntries(played) } };
}

// Once per manifest: the bench manifest holds every size's script, and a run's start must not pay for hashing it.
const digests = new WeakMap<Manifest, string>();
function digestOf(manifest: Manifest): string {
  let digest = digests.get(manifest);
  if (!digest) digests.set(manifest, (digest = manifestDigest(manifest)));
  return digest;
}

export function agentRunInput(manifest: Manifest, calls: number, perTurn: number): AgentRunInput {
  return {
    prompt: 'Look up each of our customers in the CRM, again and again.',
    principal: 'agent:bench',
    grants: ['tool://crm/lookup_customer'],
    manifestDigest: digestOf(manifest),
    model: { endpoint: lookupsEndpoint(calls, perTurn) },
  };
}

const bytesOf = (events: Event[]) =>
  events.reduce((n, e) => n + temporal.api.history.v1.HistoryEvent.encode(e).finish().length, 0);

/** The histories of a chain of runs, oldest first. */
export async function chainOf(client: Client, workflowId: string): Promise<Event[][]> {
  const out: Event[][] = [];
  let runId: string | undefined;
  for (;;) {
    const events = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    out.unshift(events);
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    if (!runId) return out;
  }
}

export async function longRun(
  client: Client,
  taskQueue: string,
  manifest: Manifest,
  bundle: { code: string },
  calls = 10_000,
  perTurn = 10,
): Promise<LongFigures> {
  const workflowId = `bench-long-${randomUUID()}`;
  const started = process.hrtime.bigint();
  const result: AgentRunResult = await client.workflow.execute('agentRun', {
    taskQueue,
    workflowId,
    args: [agentRunInput(manifest, calls, perTurn)],
    workflowExecutionTimeout: '2h',
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const chain = await chainOf(client, workflowId);
  const historyBytes = chain.map(bytesOf);
  let replayed = true;
  for (const [i, events] of chain.entries()) {
    try {
      await Worker.runReplayHistory({ workflowBundle: bundle }, { events }, `${workflowId}#${i}`);
    } catch (err) {
      console.error(`history ${i} of ${workflowId} did not replay: ${(err as Error).message}`);
      replayed = false;
    }
  }
  const maxHistoryBytes = Math.max(...historyBytes);
  return {
    calls: result.summary?.calls ?? result.journal.length,
    callsPerTurn: perTurn,
    status: result.status,
    runs: chain.length,
    seconds,
    maxHistoryBytes,
    maxHistoryEvents: Math.max(...chain.map((c) => c.length)),
    historyBytes,
    replayed,
    goals: {
      completes: result.status === 'completed' && (result.summary?.calls ?? 0) === calls,
      everyHistoryUnder10MB: maxHistoryBytes < 10 * 1024 * 1024,
      everyHistoryReplays: replayed,
    },
  };
}

export const BENCH_DIR = path.resolve(__dirname);
