import { z } from 'zod';
import { defineTool, type Tool } from 'toolplane';
import { defaultStoreDir, KeyedLog } from '../keyed-log';
import { TicketId } from './tickets';

export function createCloseTicket(
  store = new KeyedLog<{ idempotencyKey: string; ticket_id: string; resolution: string }>(
    defaultStoreDir(),
    'closed-tickets',
  ),
): Tool {
  return defineTool({
    id: 'tool://tickets/close_ticket',
    description: 'Close a support ticket with a resolution note. Closing twice is harmless.',
    input: z.strictObject({ ticket_id: TicketId, resolution: z.string().max(2000) }),
    safety: 'idempotent',
    origin: 'builtin',
    async call(ctx, t) {
      ctx.check();
      await store.record({ idempotencyKey: `${t.ticket_id}`, ...t });
      return { ticket_id: t.ticket_id, status: 'closed' };
    },
  });
}
