import { z } from 'zod';
import { defineTool } from 'toolplane';

/** Notes saved by idempotency key: a retried call saves nothing twice. */
export const saved = new Map<string, string>();

export const saveNote = defineTool({
  id: 'tool://notes/save',
  description: 'Save a note.',
  input: z.strictObject({ text: z.string() }),
  safety: 'idempotent',
  origin: 'builtin',
  async call(ctx, { text }) {
    ctx.check();
    saved.set(ctx.idempotencyKey, text);
    return { saved: true, key: ctx.idempotencyKey };
  },
});

/** Every tool of this worker: what `toolplane manifest schemas --tools` and `toolplane worker --tools` load. */
export const tools = [saveNote];
