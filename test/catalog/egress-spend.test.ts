// Destinations read from arguments, money read exactly, and the manifest's errors naming the path.
import os from 'node:os';
import path from 'node:path';
import { ToolRegistry } from '../../activities/tool-registry';
import { loadManifest } from '../../runtime/manifest-file';
import { createTools as createWorkspaceTools } from '../../examples/workspace/tools';
import { Manifest, ToolDecl, type ToolDeclInput } from '../../catalog/manifest';
import { destinationsOf, normaliseDestination } from '../../catalog/egress';
import { paymentOf } from '../../catalog/spend';
import { toMinorUnits } from '../../catalog/money';

const base: ToolDeclInput = {
  id: 'tool://mail/send',
  description: 'Send mail.',
  input_schema: { type: 'object' },
  safety: 'mutating',
  recovery: 'fail',
};
const decl = (extra: Partial<ToolDeclInput>) => ToolDecl.parse({ ...base, ...extra });

describe('egress destinations', () => {
  it('normalises a destination: trim, NFKC, lower case, no inner spaces', () => {
    expect(normaliseDestination('  Dan@Partner.Example ')).toBe('dan@partner.example');
    expect(normaliseDestination('ＤＡＮ＠partner.example')).toBe('dan@partner.example');
    expect(normaliseDestination('DE89 3704 0044 0532 0130 00')).toBe('de89370400440532013000');
  });

  it('keeps the fixed label form', () => {
    expect(
      destinationsOf(decl({ egress: { destination: 'smtp.example', max_bytes_per_run: 10 } }), { to: 'x@y.example' }),
    ).toEqual(['smtp.example']);
  });

  it('reads destinations from pointers, each element of an array, once each', () => {
    const d = decl({ egress: { destinations: ['/to', '/cc'], max_bytes_per_run: 10 } });
    expect(destinationsOf(d, { to: 'A@x.example', cc: ['b@x.example', ' a@X.example', 'c@x.example'] })).toEqual([
      'a@x.example',
      'b@x.example',
      'c@x.example',
    ]);
    expect(destinationsOf(d, { to: 'a@x.example' })).toEqual(['a@x.example']);
  });

  it('fails closed on a destination that is not a string or number', () => {
    const d = decl({ egress: { destinations: ['/to'], max_bytes_per_run: 10 } });
    expect(() => destinationsOf(d, { to: { address: 'a@x.example' } })).toThrow(/\/to/);
    expect(() => destinationsOf(d, { to: '   ' })).toThrow(/\/to/);
  });
});

describe('money in minor units', () => {
  it('converts decimal strings and numbers exactly, by the currency exponent', () => {
    expect(toMinorUnits('12.34', 'major', 'EUR')).toBe(1234n);
    expect(toMinorUnits('0.1', 'major', 'EUR')).toBe(10n);
    expect(toMinorUnits(0.29, 'major', 'EUR')).toBe(29n);
    expect(toMinorUnits('1500', 'major', 'JPY')).toBe(1500n);
    expect(toMinorUnits('1.234', 'major', 'KWD')).toBe(1234n);
    expect(toMinorUnits('90071992547409931', 'minor', 'EUR')).toBe(90071992547409931n);
    expect(toMinorUnits(120000, 'minor', 'EUR')).toBe(120000n);
  });

  it('refuses what it cannot read exactly', () => {
    expect(() => toMinorUnits('12.345', 'major', 'EUR')).toThrow(/more decimals/);
    expect(() => toMinorUnits('1e3', 'major', 'EUR')).toThrow();
    expect(() => toMinorUnits(12.5, 'minor', 'EUR')).toThrow();
    expect(() => toMinorUnits('-5', 'minor', 'EUR')).toThrow();
    expect(() => toMinorUnits('12.3', 'major', 'JPY')).toThrow();
    expect(() => toMinorUnits(true, 'minor', 'EUR')).toThrow();
  });

  it('reads a payment from the declared pointers', () => {
    const d = decl({
      spend: {
        amount: '/amount',
        amount_unit: 'major',
        currency: '/currency',
        payee: '/iban',
        max_minor_per_payee: { EUR: 100000 },
      },
    });
    expect(paymentOf(d, { amount: '250.50', currency: ' eur', iban: 'DE89 3704 0044 0532 0130 00' })).toEqual({
      payee: 'de89370400440532013000',
      currency: 'EUR',
      minor: 25050n,
    });
    expect(paymentOf(d, { currency: 'EUR', iban: 'x' })).toBeUndefined();
    expect(() => paymentOf(d, { amount: '1.00', currency: 'EUR' })).toThrow(/payee/);
    const fixed = decl({
      spend: { amount: '/amount_cents', currency: 'EUR', payee: '/to', max_minor_per_payee: { EUR: 1 } },
    });
    expect(paymentOf(fixed, { amount_cents: 5, to: 'a' })).toEqual({ payee: 'a', currency: 'EUR', minor: 5n });
  });
});

describe('the manifest shape', () => {
  const manifest = (tool: Record<string, unknown>) =>
    Manifest.safeParse({ version: 1, servers: { mail: { kind: 'in_process' } }, tools: [{ ...base, ...tool }] });
  const paths = (r: ReturnType<typeof manifest>) => (r.success ? [] : r.error.issues.map((i) => i.path.join('.')));

  it('accepts the three declarations', () => {
    const r = manifest({
      egress: { destinations: ['/to'], max_bytes_per_run: 4096 },
      carried: { pointer: '/attachments', resolve: 'tool', redaction: { lowers_to: 'internal' } },
      spend: {
        amount: '/amount_minor',
        currency: '/currency',
        payee: '/iban',
        max_minor_per_payee: { EUR: 100000, USD: '5000' },
      },
    });
    expect(r.success).toBe(true);
  });

  it('names the path of a mistake', () => {
    expect(paths(manifest({ carried: { pointer: 'attachments', resolve: 'tool' } }))).toContain(
      'tools.0.carried.pointer',
    );
    expect(
      paths(manifest({ spend: { amount: '/a', currency: 'euro', payee: '/p', max_minor_per_payee: { EUR: 1 } } })).some(
        (p) => p.startsWith('tools.0.spend.currency'),
      ),
    ).toBe(true);
    expect(
      paths(
        manifest({ spend: { amount: '/a', currency: 'EUR', payee: '/p', max_minor_per_payee: { EUR: 1.5 } } }),
      ).some((p) => p.startsWith('tools.0.spend.max_minor_per_payee')),
    ).toBe(true);
    expect(
      paths(manifest({ egress: { destinations: [], max_bytes_per_run: 1 } })).some((p) =>
        p.startsWith('tools.0.egress'),
      ),
    ).toBe(true);
  });
});

describe('a worker whose tool declares carried content', () => {
  it('must implement carried(), or it is drift', () => {
    const manifest = loadManifest(
      path.resolve(__dirname, '..', '..', 'examples', 'workspace', 'manifest.yaml'),
    ).manifest;
    const tools = createWorkspaceTools(os.tmpdir());
    expect(new ToolRegistry(tools).drift(manifest)).toEqual([]);
    const bare = tools.map((t) => (t.def().id === 'tool://mail/send_email' ? { ...t, carried: undefined } : t));
    expect(new ToolRegistry(bare).drift(manifest)).toEqual([
      { toolId: 'tool://mail/send_email', field: 'carried resolve tool needs a carried() implementation' },
    ]);
  });
});
