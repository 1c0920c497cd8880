import type { Tool } from 'toolplane';
import { defaultStoreDir, KeyedLog } from '../keyed-log';

export function createCloseTicket(
  store = new KeyedLog<{ idempotencyKey: string; ticket_id: string; resolution: string }>(
    defaultStoreDir(),
    'closed-tickets',
  ),
): Tool {
  return {
    origin: 'builtin',
    def: () => ({
      id: 'tool://tickets/close_ticket',
      description: 'Close a support ticket with a resolution note. Closing twice is harmless.',
      inputSchema: {
        type: 'object',
        properties: {
          ticket_id: { type: 'string', pattern: '^T-[0-9]+$' },
          resolution: { type: 'string', maxLength: 2000 },
        },
        required: ['ticket_id', 'resolution'],
        additionalProperties: false,
      },
      safety: 'idempotent',
    }),
    async call(ctx, input) {
      const t = input as { ticket_id: string; resolution: string };
      ctx.check();
      await store.record({ idempotencyKey: `${t.ticket_id}`, ...t });
      return { ticket_id: t.ticket_id, status: 'closed' };
    },
  };
}
