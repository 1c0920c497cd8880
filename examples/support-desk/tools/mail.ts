import type { Tool } from 'toolplane';
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
  return {
    origin: 'builtin',
    def: () => ({
      id: 'tool://mail/send_email',
      description: 'Send an email to one recipient.',
      inputSchema: {
        type: 'object',
        properties: {
          to: { type: 'string', description: 'Recipient address.' },
          subject: { type: 'string', maxLength: 200 },
          body: { type: 'string', maxLength: 20000 },
        },
        required: ['to', 'subject', 'body'],
        additionalProperties: false,
      },
      safety: 'mutating',
    }),
    async call(ctx, input) {
      const m = input as { to: string; subject: string; body: string };
      ctx.check();
      faultPoint('before_call');
      const { record } = await store.record({ idempotencyKey: ctx.idempotencyKey, ...m });
      faultPoint('after_commit');
      return { message_id: record.id, status: 'sent' };
    },
  };
}
