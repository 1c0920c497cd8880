import type { Tool } from 'toolplane';
import { ToolFailedLanded } from 'toolplane';
import { TICKETS } from '../data';

export const readTicket: Tool = {
  origin: 'builtin',
  def: () => ({
    id: 'tool://tickets/read_ticket',
    description: 'Read a support ticket: who sent it and what it says.',
    inputSchema: {
      type: 'object',
      properties: { ticket_id: { type: 'string', pattern: '^T-[0-9]+$' } },
      required: ['ticket_id'],
      additionalProperties: false,
    },
    safety: 'read_only',
  }),
  async call(ctx, input) {
    ctx.check();
    const t = TICKETS[(input as { ticket_id: string }).ticket_id];
    if (!t) throw new ToolFailedLanded(`no ticket ${(input as { ticket_id: string }).ticket_id}`);
    return t;
  },
};
