import { z } from 'zod';
import { defineTool, type Tool } from 'toolplane';
import { faultPoint, holdPoint } from '../fault';
import { paymentsStore } from '../payments-store';

export function createRefund(store = paymentsStore()): Tool {
  return defineTool({
    id: 'tool://payments/refund',
    description: 'Refund an amount to a customer account. Moves money.',
    input: z.strictObject({
      account_id: z.string().describe('The account to refund to.'),
      amount_cents: z.int().min(1).max(100000),
      currency: z.enum(['EUR', 'USD', 'GBP']),
      memo: z.string().max(500).optional(),
    }),
    safety: 'mutating',
    origin: 'builtin',
    async call(ctx, a) {
      ctx.check();
      faultPoint('before_call');
      await holdPoint('refund');
      const { record, duplicate } = await store.record({
        idempotencyKey: ctx.idempotencyKey,
        kind: 'refund',
        account: a.account_id,
        amountCents: a.amount_cents,
        currency: a.currency,
        memo: a.memo ?? '',
      });
      faultPoint('after_commit');
      return { payment_id: record.id, status: 'refunded', duplicate };
    },
    async reconcile(_ctx, idempotencyKey) {
      faultPoint('during_reconcile');
      const payment = store.byKey(idempotencyKey);
      return payment
        ? { status: 'landed', output: { payment_id: payment.id, status: 'refunded', duplicate: false } }
        : { status: 'not_landed' };
    },
  });
}
