// Workflow-safe: the gateway bench's baselines beside the MCP session (`mcpSession`), the same tool each way.
import {
  allHandlersFinished,
  condition,
  defineSignal,
  defineUpdate,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { BenchActivities } from './activities';

const { plainLookup } = proxyActivities<BenchActivities>({ startToCloseTimeout: '30s' });

/** One call into a running `plainSession`: its handler runs one plain proxied activity and answers its result. */
export const plainCallUpdate = defineUpdate<unknown, [{ email: string }]>('bench.plain.call');
/** Ends a `plainSession`. */
export const plainEndSignal = defineSignal('bench.plain.end');

/**
 * The plain side: a running workflow that answers each update with one plain activity (client → update →
 * activity → answer, the shape of a gateway call), without catalogue, gate, key, journal or memo.
 */
export async function plainSession(): Promise<number> {
  let calls = 0;
  let ending = false;
  setHandler(plainCallUpdate, async (args) => {
    calls++;
    return plainLookup(args);
  });
  setHandler(plainEndSignal, () => {
    ending = true;
  });
  await condition(() => ending && allHandlersFinished());
  return calls;
}

/** The hand-rolled MCP server's workflow: one per `tools/call`, one plain activity, its result. */
export async function handRolledCall(args: { email: string }): Promise<unknown> {
  return plainLookup(args);
}
