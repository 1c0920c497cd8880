/**
 * The chaos campaign's operator resets (issue 50): a finished run is reset, as `temporal workflow reset`
 * does, to one of its completed workflow tasks chosen at random, on the operator's own credential; a
 * worker serves the reset run until it ends. What the payments provider holds before and after says
 * whether anything was performed again: a refund the base completed is adopted, never sent.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { paymentsStore } from '../../examples/support-desk/payments-store';
import type { ToolRunResult } from '../../workflows/tool-run';
import type { WorkerProcess } from '../worker-process';

export interface ResetOutcome {
  /** The reset run ended (completed or failed as a workflow) before the deadline. */
  finished: boolean;
  /** Refunds the provider received after the reset: new payments and sends again under a key it holds. */
  sentAgain: number;
  /** Refunds the reset run's journal calls done that the provider does not hold. */
  lost: number;
  /** The reset run's journal entries adopted from a run it was reset from. */
  adopted: number;
}

async function retried<T>(what: () => Promise<T>, until: number): Promise<T> {
  for (;;) {
    try {
      return await what();
    } catch (err) {
      // The frontend or PostgreSQL is down: ask again when it is back.
      if (Date.now() > until) throw err;
      await sleep(1000);
    }
  }
}

export async function resetFinishedRun(opts: {
  client: Client;
  namespace: string;
  handle: WorkflowHandle;
  dir: string;
  memos: string[];
  random: () => number;
  spawn: () => WorkerProcess;
  /** Answers the reset run's questions, as the lane's operator does. */
  answer: (h: WorkflowHandle) => Promise<void>;
  deadlineMs: number;
}): Promise<ResetOutcome> {
  const until = Date.now() + opts.deadlineMs;
  const store = paymentsStore(opts.dir);
  const before = store.all().length + store.repeats();
  const base = await retried(async () => (await opts.handle.describe()).runId, until);
  const events = await retried(
    async () => (await opts.client.workflow.getHandle(opts.handle.workflowId, base).fetchHistory()).events ?? [],
    until,
  );
  const tasks = events.filter((e) => e.workflowTaskCompletedEventAttributes);
  const to = tasks[Math.floor(opts.random() * tasks.length)]!;
  const requestId = randomUUID();
  const { runId } = await retried(
    () =>
      opts.client.workflowService.resetWorkflowExecution({
        namespace: opts.namespace,
        workflowExecution: { workflowId: opts.handle.workflowId, runId: base },
        reason: 'chaos campaign: an operator reset',
        workflowTaskFinishEventId: to.eventId!,
        requestId,
      }),
    until,
  );
  const reset = opts.client.workflow.getHandle(opts.handle.workflowId, runId ?? undefined);
  let result: ToolRunResult | undefined;
  let finished = false;
  const waiting = (async () => {
    for (;;) {
      try {
        result = (await reset.result()) as ToolRunResult;
        finished = true;
        return;
      } catch (err) {
        if (err instanceof WorkflowFailedError) {
          finished = true;
          return;
        }
        if (Date.now() > until) return;
        await sleep(1000);
      }
    }
  })();
  let worker = opts.spawn();
  while (!finished && Date.now() < until) {
    await Promise.race([waiting, sleep(1000)]);
    if (!finished) await opts.answer(reset);
    if (!finished && (worker.child.exitCode !== null || worker.child.signalCode !== null)) worker = opts.spawn();
  }
  await worker.stop();
  const payments = store.all();
  const lost = opts.memos.filter((memo, i) => {
    const entry = result?.journal.find((e) => e.position === i);
    return entry?.outcome === 'ok' && !payments.some((p) => p.memo === memo);
  }).length;
  return {
    finished,
    sentAgain: payments.length + store.repeats() - before,
    lost,
    adopted: result?.journal.filter((e) => e.adoptedFrom !== undefined).length ?? 0,
  };
}
