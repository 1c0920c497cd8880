// The baseline activity calls the very same tool implementation the plane performs.
import { detachedCtx } from '../activities/ctx';
import { lookupCustomer } from '../examples/support-desk/tools/crm';

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
  };
}
export type BenchActivities = ReturnType<typeof createBenchActivities>;
