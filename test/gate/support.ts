// What the gate's unit tests share: a small manifest (a CRM whose results name accounts, a refund
// that pays them, a mail tool), its catalog, and a run's labels after the CRM answered.
import { Manifest, type ManifestInput, type Sensitivity } from '../../catalog/manifest';
import { ALLOW_ALL } from '../../catalog/policy';
import { ToolCall } from '../../catalog/tool-call';
import { ToolCatalog } from '../../catalog/tool-catalog';
import type { RunTicket } from '../../common/ticket';
import { Provenance, USER_PROMPT } from '../../workflows/gate/provenance';

export const CRM = 'tool://crm/lookup_customer';
export const REFUND = 'tool://payments/refund';
export const MAIL = 'tool://mail/send_email';
export const FILES = 'tool://mail/send_files';

const manifestInput: ManifestInput = {
  version: 1,
  name: 'gate-unit',
  servers: { crm: { kind: 'in_process' }, payments: { kind: 'in_process' }, mail: { kind: 'in_process' } },
  tools: [
    {
      id: CRM,
      description: 'Look a customer up.',
      input_schema: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] },
      safety: 'read_only',
      recovery: 'retry',
      sensitivity: { max: 'internal', output: 'internal' },
    },
    {
      id: REFUND,
      description: 'Refund an account.',
      input_schema: {
        type: 'object',
        properties: {
          account_id: { type: 'string' },
          amount_cents: { type: 'integer' },
          memo: { type: 'string' },
        },
        required: ['account_id', 'amount_cents'],
      },
      safety: 'mutating',
      recovery: 'reconcile',
      honours_idempotency_key: true,
      sensitivity: { max: 'confidential', output: 'internal' },
      protected_fields: [
        { pointer: '/account_id', from_sources: [CRM] },
        { pointer: '/memo', accepts_untrusted: true },
      ],
      spend: { amount: '/amount_cents', currency: 'EUR', payee: '/account_id', max_minor_per_payee: { EUR: 5000 } },
    },
    {
      id: MAIL,
      description: 'Send an email.',
      input_schema: {
        type: 'object',
        properties: { to: { type: 'string' }, body: { type: 'string' } },
        required: ['to', 'body'],
      },
      safety: 'mutating',
      recovery: 'escalate',
      sensitivity: { max: 'internal', output: 'public' },
      protected_fields: [
        { pointer: '/to', from_sources: [CRM, USER_PROMPT] },
        { pointer: '/body', accepts_untrusted: true },
      ],
      egress: { destination: 'smtp.example', max_bytes_per_run: 400 },
    },
    {
      id: FILES,
      description: 'Send files by email.',
      input_schema: {
        type: 'object',
        properties: { to: { type: 'string' }, attachments: { type: 'array', items: { type: 'string' } } },
        required: ['to', 'attachments'],
      },
      safety: 'mutating',
      recovery: 'escalate',
      sensitivity: { max: 'internal', output: 'public' },
      protected_fields: [
        { pointer: '/to', from_sources: [CRM, USER_PROMPT] },
        { pointer: '/attachments', from_sources: [USER_PROMPT] },
      ],
      egress: { destinations: ['/to'], max_bytes_per_run: 1000 },
      carried: { pointer: '/attachments', resolve: 'tool' },
    },
  ],
};

export const manifest = Manifest.parse(manifestInput);
export const catalog = ToolCatalog.fromManifest(
  manifest,
  manifest.tools.map((t) => t.id),
);
export const offerOf = (toolId: string) => catalog.offered(ALLOW_ALL).find((o) => o.toolId === toolId);
export const ticket: RunTicket = { identity: { principal: 'agent:unit', groups: [] }, permits: {}, carry: '' };
export const call = (toolId: string, args: Record<string, unknown>) => ToolCall.prepare(catalog, toolId, args);

/**
 * The labels of a run whose principal asked to refund Ada (the amounts in their words), after the CRM
 * returned her account, as sensitive as `crm` says (a CRM declared to return confidential data).
 */
export function afterLookup(crm: Sensitivity = 'internal'): Provenance {
  const p = new Provenance();
  p.produce('Refund ada@example.com 30 EUR now and 20 EUR later, and send her f_1.', {
    source: USER_PROMPT,
    trusted: true,
    callTrusted: true,
    sensitivity: 'internal',
  });
  p.produce(
    { email: 'ada@example.com', account_id: 'acct_ada', phone: '+44 20 7946 0000' },
    { source: CRM, trusted: false, callTrusted: true, sensitivity: crm },
  );
  return p;
}
