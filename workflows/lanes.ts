// Workflow-safe: how one model turn's tool calls are scheduled. Read-only calls run together;
// calls that change the world share one serial lane unless a concurrency key narrows it.
import { canonicalJson } from '../catalog/digest';
import { getAt } from '../catalog/json-pointer';
import type { ToolDecl } from '../catalog/manifest';

export const GLOBAL_LANE = 'global';

/** The lane a call joins; `undefined` runs it concurrently with everything. */
export function laneOf(decl: ToolDecl | undefined, args: unknown, position: number): string | undefined {
  // Unknown or undeclared tools are non-idempotent until proven otherwise.
  if (!decl) return GLOBAL_LANE;
  switch (decl.concurrency?.class) {
    case 'serialize':
      return GLOBAL_LANE;
    case 'independent':
      return `independent:${position}`;
    case 'shared':
      return undefined;
    case 'keyed': {
      const value = getAt(args, decl.concurrency.key);
      // No key in the arguments: fail closed into the global lane.
      return value === undefined ? GLOBAL_LANE : `key:${decl.concurrency.key}=${canonicalJson(value)}`;
    }
    default:
      return decl.safety === 'read_only' ? undefined : GLOBAL_LANE;
  }
}

/** Runs each item in its lane (in order within a lane) and returns the results in item order. */
export async function runInLanes<T>(items: { lane: string | undefined; run: () => Promise<T> }[]): Promise<T[]> {
  const tails = new Map<string, Promise<unknown>>();
  return Promise.all(
    items.map((item) => {
      if (item.lane === undefined) return item.run();
      const previous = tails.get(item.lane) ?? Promise.resolve();
      const next = previous.then(item.run, item.run);
      tails.set(
        item.lane,
        next.catch(() => undefined),
      );
      return next;
    }),
  );
}
