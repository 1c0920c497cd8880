// The support desk's tools over stores in a test's own directory, and those stores, to read what landed.
import { KeyedLog } from '../../examples/support-desk/keyed-log';
import type { Script } from './agent';
import { paymentsStore } from '../../examples/support-desk/payments-store';
import { createCloseTicket } from '../../examples/support-desk/tools/close-ticket';
import { lookupCustomer } from '../../examples/support-desk/tools/crm';
import { createSendEmail, outbox } from '../../examples/support-desk/tools/mail';
import { createRefund } from '../../examples/support-desk/tools/payments';
import { readTicket } from '../../examples/support-desk/tools/tickets';

export function supportDesk(dir: string) {
  const payments = paymentsStore(dir);
  const mail = outbox(dir);
  const closed = new KeyedLog<{ idempotencyKey: string; ticket_id: string; resolution: string }>(dir, 'closed');
  return {
    payments,
    outbox: mail,
    closed,
    tools: [lookupCustomer, readTicket, createRefund(payments), createSendEmail(mail), createCloseTicket(closed)],
  };
}

/** The desk's refund in two turns: look the customer up, then refund 25 EUR to her account. */
export const refundScript: Script = {
  prompt: 'Refund 25 EUR to alice@example.com.',
  turns: [
    { tool_calls: [{ name: 'crm__lookup_customer', arguments: { email: 'alice@example.com' } }] },
    {
      tool_calls: [
        { name: 'payments__refund', arguments: { account_id: 'acct_alice_001', amount_cents: 2500, currency: 'EUR' } },
      ],
    },
    { final: 'done' },
  ],
};
