/**
 * Fixture worlds for the injection suite: tools whose answers are fixed data and whose effects
 * land in a durable store the tests read. Each tool's input is a zod schema (see `Fixture`).
 */
import path from 'node:path';
import type { z } from 'zod';
import type { CarriedContent, Ctx, Tool, ToolDecl, ToolInputSchema } from 'toolplane';
import { defineTool, loadManifest, ToolFailedLanded } from 'toolplane';
import { defaultStoreDir, KeyedLog } from '../support-desk/keyed-log';

export interface Effect {
  idempotencyKey: string;
  tool: string;
  args: Record<string, unknown>;
}

/**
 * One world tool: its zod input, and what it does. Description and safety are the world manifest's
 * (these worlds exist to exercise the gates); the input schema is the fixture's, so a manifest whose
 * `input_schema` drifts from it is refused at start like any other.
 */
export type Fixture = (decl: ToolDecl, store: KeyedLog<Effect>) => Tool;

/** A read-only tool answering from fixed data; `undefined` means nothing was found (a landed failure). */
export function answers<S extends ToolInputSchema>(input: S, answer: (args: z.output<S>) => unknown): Fixture {
  return (decl) =>
    defineTool({
      id: decl.id,
      description: decl.description,
      safety: decl.safety,
      origin: 'builtin',
      input,
      async call(_ctx, args) {
        const out = answer(args);
        if (out === undefined) throw new ToolFailedLanded(`${decl.id}: nothing found for ${JSON.stringify(args)}`);
        return out;
      },
    });
}

/**
 * A mutating tool whose effect lands in the world's store, keyed by idempotency key, and can be
 * reconciled; `carried` says what a call would send beside its arguments (attachments named by id).
 */
export function lands<S extends ToolInputSchema>(input: S, carried?: (args: z.output<S>) => CarriedContent): Fixture {
  return (decl, store) =>
    defineTool({
      id: decl.id,
      description: decl.description,
      safety: decl.safety,
      origin: 'builtin',
      input,
      ...(carried ? { carried: async (_ctx: Ctx, args: z.output<S>) => carried(args) } : {}),
      async call(ctx, args) {
        const { record } = await store.record({ idempotencyKey: ctx.idempotencyKey, tool: decl.id, args });
        // A receipt, as real providers give: it repeats what was sent.
        return { ok: true, id: record.id, receipt: record.args };
      },
      async reconcile(_ctx, key) {
        const found = store.byKey(key);
        return found
          ? { status: 'landed', output: { ok: true, id: found.id, receipt: found.args } }
          : { status: 'not_landed' };
      },
    });
}

export function effectsStore(dir = defaultStoreDir()): KeyedLog<Effect> {
  return new KeyedLog<Effect>(dir, 'effects');
}

/** The world's tools: one fixture for each tool its manifest declares, no more and no fewer. */
export function fixtureTools(manifestFile: string, fixtures: Record<string, Fixture>, dir = defaultStoreDir()): Tool[] {
  const { manifest } = loadManifest(manifestFile);
  const store = effectsStore(dir);
  const declared = new Set(manifest.tools.map((t) => t.id));
  const extra = Object.keys(fixtures).filter((id) => !declared.has(id));
  if (extra.length) throw new Error(`${path.basename(manifestFile)} declares no ${extra.join(', ')}`);
  return manifest.tools.map((decl) => {
    const fixture = fixtures[decl.id];
    if (!fixture) throw new Error(`${path.basename(manifestFile)}: no fixture for ${decl.id}`);
    return fixture(decl, store);
  });
}
