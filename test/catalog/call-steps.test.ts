// The call pipeline's steps, each alone: prepare, gate and lease decide and journal without Temporal.
import { ToolCatalog } from '../../catalog/tool-catalog';
import { authorize, mayHold, resolveModel, RunRefused } from '../../catalog/authority';
import { ToolplaneError } from '../../catalog/errors';
import { gateCall } from '../../workflows/call/gate';
import { takeLease } from '../../workflows/call/lease';
import { prepareCall } from '../../workflows/call/prepare';
import type { JournalEntry } from '../../workflows/journal';
import { StepError } from '../../workflows/step-error';
import { exampleManifest } from '../support/env';

const manifest = exampleManifest();
const catalog = ToolCatalog.fromManifest(manifest, ['tool://crm/lookup_customer']);
const entry = (): JournalEntry => ({ position: 3, toolId: 'x', decision: 'allowed', attempts: 0, recovery: 'none' });

function thrown(fn: () => unknown): StepError {
  try {
    fn();
  } catch (err) {
    if (StepError.is(err)) return err;
    throw err;
  }
  throw new Error('expected a StepError');
}

describe('prepare', () => {
  it('refuses an ungranted tool and journals why', () => {
    const e = entry();
    const err = thrown(() => prepareCall(e, catalog, 'tool://payments/refund', {}));
    expect(err).toMatchObject({ code: 'Unreachable', rule: 'unreachable' });
    expect(e).toMatchObject({ decision: 'refused', outcome: 'refused', rule: 'unreachable' });
  });

  it('refuses a call that answers another offer', () => {
    const offer = catalog.offered({ allow: '*' })[0]!;
    const err = thrown(() =>
      prepareCall(entry(), catalog, 'tool://tickets/read_ticket', {}, { ...offer, toolId: 'tool://crm/other' }),
    );
    expect(err).toMatchObject({ code: 'Unreachable', rule: 'answering' });
  });
});

describe('gate', () => {
  const call = prepareCall(entry(), catalog, 'tool://crm/lookup_customer', { email: 'a@example.com' });

  it('replaces the arguments and records substitutions when it allows', async () => {
    const e = entry();
    const gated = await gateCall(e, call, () => ({
      allow: true,
      args: { email: 'A@example.com' },
      substitutions: [{ pointer: '/email', written: 'x', sent: 'y' }],
    }));
    expect(gated.args).toEqual({ email: 'A@example.com' });
    expect(e.substitutions).toEqual([{ pointer: '/email', written: 'x', sent: 'y' }]);
  });

  it('refuses with the rule unless a person may overrule it', async () => {
    await expect(
      gateCall(entry(), call, () => ({ allow: false, rule: 'taint:/email', reason: 'untrusted' })),
    ).rejects.toMatchObject({ code: 'Refused', rule: 'taint:/email' });
    const asked = await gateCall(entry(), call, () => ({
      allow: false,
      rule: 'taint:/email',
      reason: 'untrusted',
      askPerson: true,
    }));
    expect(asked.verdict).toMatchObject({ askPerson: true });
  });
});

describe('lease', () => {
  it('needs the capability the worker granted; names the extension and the position', () => {
    expect(thrown(() => takeLease(entry(), 'ext:alpha:add_entry', []))).toMatchObject({
      code: 'LeaseMissing',
      rule: 'lease',
    });
    const e = entry();
    expect(takeLease(e, 'ext:alpha:add_entry', ['extension-runtime'])).toBe('lease:alpha:3');
    expect(e.lease).toEqual({ id: 'lease:alpha:3', states: ['granted'] });
    expect(takeLease(entry(), 'tool://crm/lookup_customer', [])).toBeUndefined();
  });
});

describe('authority', () => {
  const principals = {
    'agent:desk': { tools: '*' as const, capabilities: ['extension-runtime'] },
    '*': { tools: ['tool://crm/lookup_customer'], capabilities: [] },
  };
  const declared = { tools: manifest.tools, principals };

  it('intersects grants and capabilities with what the principal may have', () => {
    const a = authorize(declared, 'sha256:x', {
      principal: 'user:1',
      grants: ['tool://crm/lookup_customer', 'tool://payments/refund'],
      capabilities: ['extension-runtime'],
    });
    expect(a).toMatchObject({
      grants: ['tool://crm/lookup_customer'],
      capabilities: [],
      withheld: { grants: ['tool://payments/refund'], capabilities: ['extension-runtime'] },
    });
    expect(mayHold(principals, 'agent:desk', 'extension-runtime')).toBe(true);
  });

  it('refuses what the worker does not declare, and another pinned manifest', () => {
    expect(() => authorize(declared, 'sha256:x', { principal: 'agent:desk', grants: ['tool://x/y'] })).toThrow(
      RunRefused,
    );
    expect(() => authorize(declared, 'sha256:x', { principal: 'agent:desk', capabilities: ['root'] })).toThrow(
      /does not know: root/,
    );
    expect(() => authorize(declared, 'sha256:x', { principal: 'agent:desk', manifestDigest: 'sha256:y' })).toThrow(
      /pinned to manifest sha256:y/,
    );
  });

  it('resolves only model endpoints the worker declares; a URL or key variable from a run is refused', () => {
    const models = {
      local: { provider: 'openai-compatible' as const, base_url: 'http://127.0.0.1:1/v1', models: ['m1', 'm2'] },
    };
    expect(resolveModel(models, { endpoint: 'local' })).toMatchObject({ model: 'm1' });
    expect(() => resolveModel(models, { endpoint: 'local', model: 'm3' })).toThrow(/does not serve "m3"/);
    expect(() => resolveModel(models, { endpoint: 'scripted' })).toThrow(/not declared/);
    const smuggled = { endpoint: 'local', apiKeyEnv: 'AWS_SECRET_ACCESS_KEY' } as unknown as Parameters<
      typeof resolveModel
    >[1];
    expect(() => resolveModel(models, smuggled)).toThrow(ToolplaneError);
    expect(() => resolveModel(undefined, { endpoint: 'scripted' })).not.toThrow();
  });

  it('an endpoint whose script the worker declares refuses a run that sends its own', () => {
    const models = { played: { provider: 'scripted' as const, script: [{ final: 'done' }] } };
    expect(resolveModel(models, { endpoint: 'played' })).toMatchObject({ decl: { script: [{ final: 'done' }] } });
    expect(() => resolveModel(models, { endpoint: 'played', script: [{ final: 'mine' }] })).toThrow(
      /"played" plays the script this worker declares; a run may not send its own/,
    );
    expect(() =>
      resolveModel({ scripted: { provider: 'scripted' } }, { endpoint: 'scripted', script: [] }),
    ).not.toThrow();
  });
});
