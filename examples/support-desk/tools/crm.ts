import type { Tool } from 'toolplane';
import { ToolFailedLanded } from 'toolplane';
import { CUSTOMERS } from '../data';
import { faultPoint, hangPoint } from '../fault';

export const lookupCustomer: Tool = {
  origin: 'builtin',
  def: () => ({
    id: 'tool://crm/lookup_customer',
    description: 'Look a customer up in the CRM by email address.',
    inputSchema: {
      type: 'object',
      properties: { email: { type: 'string', description: 'The customer email address.' } },
      required: ['email'],
      additionalProperties: false,
    },
    safety: 'read_only',
  }),
  async call(ctx, input) {
    ctx.check();
    await hangPoint('lookup');
    const { email } = input as { email: string };
    const found = CUSTOMERS.find((c) => c.email === email.toLowerCase());
    if (!found) throw new ToolFailedLanded(`no customer with email ${email}`);
    faultPoint('after_commit');
    return { ...found };
  },
};
