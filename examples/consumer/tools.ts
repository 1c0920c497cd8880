import type { Tool } from 'toolplane';

/** Notes saved by idempotency key: a retried call saves nothing twice. */
export const saved = new Map<string, string>();

export const saveNote: Tool = {
  origin: 'builtin',
  def: () => ({
    id: 'tool://notes/save',
    description: 'Save a note.',
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
      additionalProperties: false,
    },
    safety: 'idempotent',
  }),
  async call(ctx, input) {
    ctx.check();
    saved.set(ctx.idempotencyKey, (input as { text: string }).text);
    return { saved: true, key: ctx.idempotencyKey };
  },
};
