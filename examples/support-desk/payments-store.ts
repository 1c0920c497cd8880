// The payments service's durable store: refunds and transfers, once per idempotency key.
import { defaultStoreDir, KeyedLog } from './keyed-log';

export interface Payment {
  idempotencyKey: string;
  kind: 'refund' | 'transfer';
  account: string;
  amountCents: number;
  currency: string;
  memo: string;
}

export function paymentsStore(dir = defaultStoreDir()): KeyedLog<Payment> {
  return new KeyedLog<Payment>(dir, 'payments');
}
