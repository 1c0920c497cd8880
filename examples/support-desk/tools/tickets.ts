import { z } from 'zod';
import { defineTool, ToolFailedLanded } from 'toolplane';
import { TICKETS } from '../data';

/** A ticket id as the desk writes it: `T-` and digits. */
export const TicketId = z.string().regex(/^T-[0-9]+$/);

export const readTicket = defineTool({
  id: 'tool://tickets/read_ticket',
  description: 'Read a support ticket: who sent it and what it says.',
  input: z.strictObject({ ticket_id: TicketId }),
  safety: 'read_only',
  origin: 'builtin',
  async call(ctx, { ticket_id }) {
    ctx.check();
    const t = TICKETS[ticket_id];
    if (!t) throw new ToolFailedLanded(`no ticket ${ticket_id}`);
    return t;
  },
});
