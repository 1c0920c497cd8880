import { z } from 'zod';
import { defineTool, type Tool } from 'toolplane';
import { faultPoint } from '../fault';
import { defaultStoreDir, KeyedLog } from '../keyed-log';

export interface Mail {
  idempotencyKey: string;
  to: string;
  subject: string;
  body: string;
}

export function outbox(dir = defaultStoreDir()): KeyedLog<Mail> {
  return new KeyedLog<Mail>(dir, 'outbox');
}

/** Sends mail; it keeps no queryable record a reconcile could use, so an unknown outcome goes to a person. */
export function createSendEmail(store = outbox()): Tool {
  return defineTool({
    id: 'tool://mail/send_email',
    description: 'Send an email to one recipient.',
    input: z.strictObject({
      to: z.string().describe('Recipient address.'),
      subject: z.string().max(200),
      body: z.string().max(20000),
    }),
    safety: 'mutating',
    origin: 'builtin',
    async call(ctx, m) {
      ctx.check();
      faultPoint('before_call');
      const { record } = await store.record({ idempotencyKey: ctx.idempotencyKey, ...m });
      faultPoint('after_commit');
      return { message_id: record.id, status: 'sent' };
    },
  });
}
