/**
 * Fixture worlds for the injection suite: tools whose answers are fixed data and whose effects
 * land in a durable store the tests read. Their definitions are taken from the world's manifest
 * (real tools carry their own, so that drift is caught; these worlds exist to exercise the gates).
 */
import path from 'node:path';
import type { CarriedContent, Tool } from 'toolplane';
import { loadManifest, ToolFailedLanded } from 'toolplane';
import { defaultStoreDir, KeyedLog } from '../support-desk/keyed-log';

export interface Effect {
  idempotencyKey: string;
  tool: string;
  args: Record<string, unknown>;
}

export type Handler = (args: Record<string, unknown>) => unknown;

/** Says what a call would carry beside its arguments (attachments named by id); throws for an unknown one. */
export type CarriedResolver = (args: Record<string, unknown>) => CarriedContent;

export function effectsStore(dir = defaultStoreDir()): KeyedLog<Effect> {
  return new KeyedLog<Effect>(dir, 'effects');
}

export function fixtureTools(
  manifestFile: string,
  reads: Record<string, Handler>,
  dir = defaultStoreDir(),
  carried: Record<string, CarriedResolver> = {},
): Tool[] {
  const { manifest } = loadManifest(manifestFile);
  const store = effectsStore(dir);
  return manifest.tools.map((decl): Tool => {
    const def = () => ({
      id: decl.id,
      description: decl.description,
      inputSchema: decl.input_schema,
      safety: decl.safety,
    });
    if (decl.safety === 'read_only') {
      const handler = reads[decl.id];
      if (!handler) throw new Error(`${path.basename(manifestFile)}: no fixture for ${decl.id}`);
      return {
        origin: 'builtin',
        def,
        async call(_ctx, input) {
          const out = handler(input as Record<string, unknown>);
          if (out === undefined) throw new ToolFailedLanded(`${decl.id}: nothing found for ${JSON.stringify(input)}`);
          return out;
        },
      };
    }
    const resolver = carried[decl.id];
    return {
      origin: 'builtin',
      def,
      ...(resolver ? { carried: async (_ctx, input) => resolver(input as Record<string, unknown>) } : {}),
      async call(ctx, input) {
        const { record } = await store.record({
          idempotencyKey: ctx.idempotencyKey,
          tool: decl.id,
          args: input as Record<string, unknown>,
        });
        // A receipt, as real providers give: it repeats what was sent.
        return { ok: true, id: record.id, receipt: record.args };
      },
      async reconcile(_ctx, key) {
        const found = store.byKey(key);
        return found
          ? { status: 'landed', output: { ok: true, id: found.id, receipt: found.args } }
          : { status: 'not_landed' };
      },
    };
  });
}
