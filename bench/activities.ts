// The baseline activities call the very same tool implementation the plane performs.
import { detachedCtx } from '../activities/ctx';
import { lookupCustomer } from '../examples/support-desk/tools/crm';

const EMAILS = ['alice@example.com', 'bob@example.com', 'chen@example.com'];

/** The scripted model every side uses: `perTurn` lookups a turn until `calls` are made. */
export function turnCalls(turn: number, calls: number, perTurn: number): { email: string }[] {
  const done = turn * perTurn;
  const n = Math.max(0, Math.min(perTurn, calls - done));
  return Array.from({ length: n }, (_, i) => ({ email: EMAILS[(done + i) % 3]! }));
}

export function createBenchActivities() {
  return {
    async plainLookup(args: { email: string }): Promise<unknown> {
      const ctx = detachedCtx({
        idempotencyKey: '',
        effectKey: '',
        toolId: 'tool://crm/lookup_customer',
        principal: 'agent:bench',
      });
      return lookupCustomer.call(ctx, args);
    },
    /** The hand-written loop's model: told the turn and the last results, it answers with the next calls. */
    async benchModelTurn(req: { turn: number; calls: number; perTurn: number; results: unknown[] }) {
      return turnCalls(req.turn, req.calls, req.perTurn);
    },
  };
}
export type BenchActivities = ReturnType<typeof createBenchActivities>;
