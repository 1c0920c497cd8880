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

/** Where an item that runs concurrently with everything tells how it ended: exactly once, and never by throwing. */
export interface LaneEnd<T> {
  ok(value: T): void;
  fail(err: unknown): void;
}

/**
 * One item of a turn. In a lane, `run` starts it once the item before it in the lane has ended, and
 * its promise is what follows waits on. In no lane, `start` starts it at once and the item tells
 * `end` how it ended: what the turn waits on is that call, and not a promise of its own (each promise
 * in the sandbox costs a stack capture on replay; bench/replay-cpu.ts counts them).
 */
export type LaneItem<T> =
  { lane: string; run: () => Promise<T> } | { lane: undefined; start: (end: LaneEnd<T>) => void };

/** Runs each item in its lane (in order within a lane) and returns the results in item order; rejects with the first failure. */
export function runInLanes<T>(items: LaneItem<T>[]): Promise<T[]> {
  return new Promise<T[]>((resolve, reject) => {
    const results = new Array<T>(items.length);
    let left = items.length;
    let over = false;
    const ok = (i: number, value: T) => {
      results[i] = value;
      if (--left === 0 && !over) {
        over = true;
        resolve(results);
      }
    };
    const fail = (err: unknown) => {
      if (over) return;
      over = true;
      reject(err);
    };
    if (left === 0) resolve(results);
    const tails = new Map<string, Promise<unknown>>();
    items.forEach((item, i) => {
      if (item.lane === undefined) {
        item.start({ ok: (value) => ok(i, value), fail });
        return;
      }
      const previous = tails.get(item.lane) ?? Promise.resolve();
      const next = previous.then(item.run, item.run);
      tails.set(
        item.lane,
        next.catch(() => undefined),
      );
      next.then((value) => ok(i, value), fail);
    });
  });
}
