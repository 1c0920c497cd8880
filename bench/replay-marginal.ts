/**
 * Replay CPU per further call, as a worker that already holds the bundle pays it. One replay worker
 * replays every side's N- and 2N-call histories, warmed up first, the sides alternating; a side's
 * figure is the median over rounds of (CPU of 2N calls - CPU of N calls) / N. What a replay costs
 * once (a fresh workflow context, the run's opening) drops out, as in the promise count
 * (`replay-promises.ts`). Not a goal of issue 33 (its replay goals are the µs per call of a whole
 * replay, `bench.ts`): printed beside them, because a whole replay's fixed cost dilutes the ratio.
 */
import { Worker } from '@temporalio/worker';
import type { temporal } from '@temporalio/proto';

type Event = temporal.api.history.v1.IHistoryEvent;

/** One side's recorded run of `calls` calls: the histories of its chain, oldest first. */
export interface RecordedRun {
  side: string;
  calls: number;
  runs: Event[][];
}

/** µs of replay CPU per further call, by side: `runs` holds an N- and a 2N-call run of each side. */
export async function marginalReplay(
  bundle: { code: string },
  recorded: RecordedRun[],
  rounds: number,
): Promise<Record<string, number>> {
  // Two warm-up rounds, then the measured ones; each run's chain is pushed run by run.
  const order = Array.from({ length: rounds + 2 }, () => recorded).flat();
  const pushes = order.flatMap((r, i) =>
    r.runs.map((events, j) => ({ i, history: { events }, workflowId: `replay-${i}-${j}` })),
  );
  const cpu = new Array<number>(order.length).fill(0);
  let at = 0;
  async function* histories() {
    for (const p of pushes) {
      at = p.i;
      yield p;
    }
  }
  let before = process.cpuUsage();
  for await (const replayed of Worker.runReplayHistories({ workflowBundle: bundle }, histories())) {
    if (replayed.error) throw replayed.error;
    const used = process.cpuUsage(before);
    cpu[at]! += used.user + used.system;
    before = process.cpuUsage();
  }
  const out: Record<string, number> = {};
  for (const side of new Set(recorded.map((r) => r.side))) {
    const [n, twice] = recorded.filter((r) => r.side === side).sort((a, b) => a.calls - b.calls);
    if (!n || !twice) continue;
    const further = twice.calls - n.calls;
    const samples: number[] = [];
    for (let round = 2; round < rounds + 2; round++) {
      const base = round * recorded.length;
      samples.push((cpu[base + recorded.indexOf(twice)]! - cpu[base + recorded.indexOf(n)]!) / further);
    }
    samples.sort((a, b) => a - b);
    out[side] = samples[Math.floor(samples.length / 2)]!;
  }
  return out;
}
