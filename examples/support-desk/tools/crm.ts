import { z } from 'zod';
import { defineTool, ToolFailedLanded } from 'toolplane';
import { CUSTOMERS } from '../data';
import { faultPoint, hangPoint } from '../fault';

export const lookupCustomer = defineTool({
  id: 'tool://crm/lookup_customer',
  description: 'Look a customer up in the CRM by email address.',
  input: z.strictObject({ email: z.string().describe('The customer email address.') }),
  safety: 'read_only',
  origin: 'builtin',
  async call(ctx, { email }) {
    ctx.check();
    await hangPoint('lookup');
    const found = CUSTOMERS.find((c) => c.email === email.toLowerCase());
    if (!found) throw new ToolFailedLanded(`no customer with email ${email}`);
    faultPoint('after_commit');
    return { ...found };
  },
});
