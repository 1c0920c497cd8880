import { CatalogError, type InvalidArguments, Unreachable } from '../../catalog/errors';
import { ToolCatalog } from '../../catalog/tool-catalog';
import { ToolCall } from '../../catalog/tool-call';
import { exampleManifest } from '../support/env';

const manifest = exampleManifest();

function refusal(fn: () => unknown): CatalogError {
  try {
    fn();
  } catch (err) {
    if (CatalogError.is(err)) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('ToolCatalog and ToolCall.prepare', () => {
  const catalog = ToolCatalog.fromManifest(manifest, ['tool://crm/lookup_customer', 'tool://payments/refund']);

  it('derives the reach from the manifest and the exact grants', () => {
    expect(catalog.grantedIds().sort()).toEqual(['tool://crm/lookup_customer', 'tool://payments/refund']);
    expect(catalog.granted('tool://payments/refund')!.decl).toBe(
      manifest.tools.find((t) => t.id === 'tool://payments/refund'),
    );
  });

  it('grants name exact identities: a prefix or a pattern grants nothing', () => {
    const c = ToolCatalog.fromManifest(manifest, ['tool://payments/*', 'tool://crm', '*']);
    expect(c.grantedIds()).toEqual([]);
  });

  it('offers the model only what the policy allows', () => {
    expect(
      catalog
        .offered({ allow: '*' })
        .map((o) => o.toolId)
        .sort(),
    ).toEqual(['tool://crm/lookup_customer', 'tool://payments/refund']);
    expect(catalog.offered({ allow: '*', deny: ['tool://payments/refund'] }).map((o) => o.toolId)).toEqual([
      'tool://crm/lookup_customer',
    ]);
    expect(
      catalog.offered({ allow: ['tool://crm/lookup_customer', 'tool://mail/send_email'] }).map((o) => o.name),
    ).toEqual(['crm__lookup_customer']);
  });

  it('refuses an undeclared tool as Unreachable, not as an unknown tool', () => {
    const err = refusal(() => ToolCall.prepare(catalog, 'tool://payments/wire_everything', {}));
    expect(err).toBeInstanceOf(Unreachable);
    expect(err.code).toBe('Unreachable');
    expect(err.data).toEqual({ toolId: 'tool://payments/wire_everything', reason: 'undeclared' });
  });

  it('refuses a declared but ungranted tool as Unreachable', () => {
    const err = refusal(() =>
      ToolCall.prepare(catalog, 'tool://mail/send_email', { to: 'a', subject: 'b', body: 'c' }),
    );
    expect(err.code).toBe('Unreachable');
    expect(err.data).toMatchObject({ reason: 'ungranted' });
  });

  it('refuses arguments that fail the schema and names every failing path', () => {
    const err = refusal(() =>
      ToolCall.prepare(catalog, 'tool://payments/refund', {
        account_id: 7,
        amount_cents: 0,
        currency: 'BTC',
        extra: true,
      }),
    ) as InvalidArguments;
    expect(err.code).toBe('InvalidArguments');
    const pointers = err.data!.problems.map((p) => p.pointer).sort();
    expect(pointers).toEqual(['/account_id', '/amount_cents', '/currency', '/extra']);
    expect(err.message).toContain('tool://payments/refund');
  });

  it('names a missing required argument by its path', () => {
    const err = refusal(() => ToolCall.prepare(catalog, 'tool://crm/lookup_customer', {})) as InvalidArguments;
    expect(err.data!.problems).toEqual([{ pointer: '/email', message: "must have required property 'email'" }]);
  });

  it('prepares a call that passes, carrying the manifest declaration and digest', () => {
    const call = ToolCall.prepare(catalog, 'tool://payments/refund', {
      account_id: 'acct_alice_001',
      amount_cents: 100,
      currency: 'EUR',
    });
    expect(call.decl.safety).toBe('mutating');
    expect(call.decl.recovery).toBe('reconcile');
    expect(call.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(call.mutates).toBe(true);
  });
});
