// The support desk's in-process tools; `toolplane worker --tools examples/support-desk/tools` loads this.
import type { Tool } from 'toolplane';
import { createCloseTicket } from './close-ticket';
import { lookupCustomer } from './crm';
import { createSendEmail } from './mail';
import { createRefund } from './payments';
import { readTicket } from './tickets';

export function createTools(): Tool[] {
  return [lookupCustomer, readTicket, createRefund(), createSendEmail(), createCloseTicket()];
}
