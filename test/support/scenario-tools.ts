// In-process tools whose failures are scripted by their arguments; their store is what landed.
import fs from 'node:fs';
import path from 'node:path';
import type { Tool } from '../../activities/tool';
import { ToolInDoubt, ToolRejected } from '../../activities/tool-errors';
import { loadManifest } from '../../runtime/manifest-file';
import { KeyedLog } from '../../examples/support-desk/keyed-log';

export const SCENARIO_MANIFEST = path.resolve(__dirname, '..', 'fixtures', 'scenario-manifest.yaml');
const decls = loadManifest(SCENARIO_MANIFEST).manifest.tools;

function defOf(id: string) {
  const d = decls.find((t) => t.id === id)!;
  return () => ({ id, description: d.description, inputSchema: d.input_schema, safety: d.safety });
}

export interface Landed {
  idempotencyKey: string;
  tool: string;
  args: unknown;
}

export function scenarioTools(dir: string) {
  fs.mkdirSync(dir, { recursive: true });
  const store = new KeyedLog<Landed>(dir, 'landed');
  const performs = new Map<string, number>();
  const count = (key: string) => {
    const n = (performs.get(key) ?? 0) + 1;
    performs.set(key, n);
    return n;
  };
  const reads: string[] = [];

  const read: Tool = {
    origin: 'builtin',
    def: defOf('tool://flaky/read'),
    async call(ctx, input) {
      reads.push(ctx.idempotencyKey);
      if ((input as { q: string }).q === 'never') throw new ToolRejected('busy, always');
      if (ctx.attempt === 1) throw new ToolRejected('busy, try again');
      return { answer: `result for ${(input as { q: string }).q}`, attempt: ctx.attempt };
    },
  };

  const charge: Tool = {
    origin: 'builtin',
    def: defOf('tool://flaky/charge'),
    async call(ctx, input) {
      const a = input as { account: string; cents: number; mode: string };
      const n = count(ctx.idempotencyKey);
      if (a.mode === 'rejected_once' && n === 1) throw new ToolRejected('rate limited before sending');
      if (a.mode === 'in_doubt_not_landed' && n === 1)
        throw new ToolInDoubt('connection reset before the provider answered');
      const { record } = await store.record({ idempotencyKey: ctx.idempotencyKey, tool: 'charge', args: a });
      if ((a.mode === 'in_doubt_landed' && n === 1) || a.mode === 'unknown_forever')
        throw new ToolInDoubt('connection reset after sending');
      return { charge_id: record.id };
    },
    async reconcile(_ctx, key) {
      const found = store.byKey(key);
      if (found && (found.args as { mode: string }).mode === 'unknown_forever')
        return { status: 'unknown', reason: 'provider ledger unavailable' };
      return found ? { status: 'landed', output: { charge_id: found.id } } : { status: 'not_landed' };
    },
  };

  const notify: Tool = {
    origin: 'builtin',
    def: defOf('tool://flaky/notify'),
    async call(ctx, input) {
      const n = count(ctx.idempotencyKey);
      await store.record({ idempotencyKey: `${ctx.idempotencyKey}#${n}`, tool: 'notify', args: input });
      if (n === 1) throw new ToolInDoubt('mail relay timed out');
      return { delivered: true };
    },
  };

  const wire: Tool = {
    origin: 'builtin',
    def: defOf('tool://flaky/wire'),
    async call(ctx, input) {
      await store.record({ idempotencyKey: ctx.idempotencyKey, tool: 'wire', args: input });
      throw new ToolInDoubt('bank gateway timed out after sending');
    },
  };

  const page: Tool = { ...notify, def: defOf('tool://flaky/page') };

  return { tools: [read, charge, notify, wire, page], store, reads, performs };
}
