import type { Tool } from 'toolplane';
import { faultPoint } from '../fault';
import { paymentsStore } from '../payments-store';

export function createRefund(store = paymentsStore()): Tool {
  return {
    origin: 'builtin',
    def: () => ({
      id: 'tool://payments/refund',
      description: 'Refund an amount to a customer account. Moves money.',
      inputSchema: {
        type: 'object',
        properties: {
          account_id: { type: 'string', description: 'The account to refund to.' },
          amount_cents: { type: 'integer', minimum: 1, maximum: 100000 },
          currency: { type: 'string', enum: ['EUR', 'USD', 'GBP'] },
          memo: { type: 'string', maxLength: 500 },
        },
        required: ['account_id', 'amount_cents', 'currency'],
        additionalProperties: false,
      },
      safety: 'mutating',
    }),
    async call(ctx, input) {
      const a = input as { account_id: string; amount_cents: number; currency: string; memo?: string };
      ctx.check();
      faultPoint('before_call');
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
  };
}
