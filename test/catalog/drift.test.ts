import { randomUUID } from 'node:crypto';
import type { Tool } from '../../activities/tool';
import { ToolRegistry } from '../../activities/tool-registry';
import { CatalogError, RegistryDrift } from '../../catalog/errors';
import { createTools } from '../../examples/support-desk/tools';
import { lookupCustomer } from '../../examples/support-desk/tools/crm';
import { exampleManifest, harness } from '../support/env';

const manifest = exampleManifest();

function variant(base: Tool, change: Partial<ReturnType<Tool['def']>>, extra: Partial<Tool> = {}): Tool {
  return { ...base, ...extra, def: () => ({ ...base.def(), ...change }) };
}

function driftOf(tools: Tool[]) {
  return new ToolRegistry(tools).drift(manifest).concat(new ToolRegistry(tools).missing(manifest));
}

describe('drift between implementations and the manifest', () => {
  const others = createTools().filter((t) => t.def().id !== 'tool://crm/lookup_customer');

  it('finds none for the example tools', () => {
    expect(driftOf(createTools())).toEqual([]);
  });

  it('names a changed input schema', () => {
    const schema = {
      ...lookupCustomer.def().inputSchema,
      properties: { email: { type: 'string', description: 'Any address.' } },
    };
    expect(driftOf([...others, variant(lookupCustomer, { inputSchema: schema })])).toEqual([
      expect.objectContaining({ toolId: 'tool://crm/lookup_customer', field: 'input_schema' }),
    ]);
  });

  it('names a changed description', () => {
    expect(driftOf([...others, variant(lookupCustomer, { description: 'Look anyone up.' })])).toEqual([
      expect.objectContaining({ toolId: 'tool://crm/lookup_customer', field: 'description' }),
    ]);
  });

  it('names an implementation that claims a weaker safety class than declared', () => {
    const refund = createTools().find((t) => t.def().id === 'tool://payments/refund')!;
    const rest = createTools().filter((t) => t.def().id !== 'tool://payments/refund');
    expect(driftOf([...rest, variant(refund, { safety: 'read_only' })])).toEqual([
      expect.objectContaining({
        toolId: 'tool://payments/refund',
        field: expect.stringContaining('safety'),
        declared: 'mutating',
        implemented: 'read_only',
      }),
    ]);
  });

  it('names a manifest laxer than its implementation', () => {
    expect(driftOf([...others, variant(lookupCustomer, { safety: 'mutating' })])).toEqual([
      expect.objectContaining({
        field: expect.stringContaining('manifest is laxer'),
        declared: 'read_only',
        implemented: 'mutating',
      }),
    ]);
  });

  it('names a tool the manifest does not declare, and a declared tool nobody implements', () => {
    const rogue = variant(lookupCustomer, { id: 'tool://crm/export_all' });
    expect(driftOf([...others, rogue])).toEqual([
      { toolId: 'tool://crm/export_all', field: 'not declared in the manifest' },
      { toolId: 'tool://crm/lookup_customer', field: 'declared in-process tool has no implementation' },
    ]);
  });

  it('names a reconcile tool without reconcile()', () => {
    const refund = createTools().find((t) => t.def().id === 'tool://payments/refund')!;
    const rest = createTools().filter((t) => t.def().id !== 'tool://payments/refund');
    const { reconcile: _dropped, ...withoutReconcile } = refund;
    expect(driftOf([...rest, withoutReconcile as Tool])).toEqual([
      expect.objectContaining({ toolId: 'tool://payments/refund', field: expect.stringContaining('reconcile') }),
    ]);
  });

  it('makes the worker refuse to start, naming the tool and the field', async () => {
    const h = await harness(`drift-${randomUUID()}`);
    try {
      let caught: unknown;
      try {
        await h.startWorker({ manifest, tools: [...others, variant(lookupCustomer, { description: 'changed' })] });
      } catch (err) {
        caught = err;
      }
      expect(CatalogError.is(caught)).toBe(true);
      expect(caught).toBeInstanceOf(RegistryDrift);
      expect((caught as Error).message).toMatch(/tool:\/\/crm\/lookup_customer: description/);
    } finally {
      await h.close();
    }
  });
});

describe('tool origin', () => {
  it('refuses an implementation that does not say where it comes from (fails closed)', () => {
    const { origin: _o, ...anonymous } = lookupCustomer;
    const others = createTools().filter((t) => t.def().id !== 'tool://crm/lookup_customer');
    expect(new ToolRegistry([...others, anonymous as Tool]).drift(manifest)).toEqual([
      expect.objectContaining({
        toolId: 'tool://crm/lookup_customer',
        field: expect.stringContaining('origin unknown'),
      }),
    ]);
  });

  it('refuses a builtin implementation of a tool the manifest says an extension serves', () => {
    const others = createTools().filter((t) => t.def().id !== 'tool://crm/lookup_customer');
    expect(new ToolRegistry([...others, { ...lookupCustomer, origin: 'extension' }]).drift(manifest)).toEqual([
      expect.objectContaining({ field: 'server', declared: 'in_process' }),
    ]);
  });
});
