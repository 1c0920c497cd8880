// The support desk's tools over stores in a test's own directory, and those stores, to read what landed.
import { KeyedLog } from '../../examples/support-desk/keyed-log';
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
