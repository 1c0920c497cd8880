/**
 * The cluster fault campaign (`npm run chaos -- --cluster`): runs of money-moving calls whose
 * refund tool declares each recovery in turn (reconcile, retry, escalate, fail) are kept in flight
 * on several lanes while the history, matching and frontend services and PostgreSQL are SIGKILLed
 * and restarted at random, and every lane SIGKILLs its own workers. Afterwards the payments store is
 * read: per fault kind, the runs that were in flight when a fault of that kind hit, and what
 * became of each refund they intended.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  Client,
  Connection,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  type WorkflowHandle,
} from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Manifest, ToolDecl } from '../../catalog/manifest';
import { loadManifest } from '../../runtime/manifest-file';
import { paymentsStore } from '../../examples/support-desk/payments-store';
import { pendingEscalations, resolveEscalation } from '../../workflows/escalation';
import type { ToolRunResult } from '../../workflows/tool-run';
import { spawnWorker, writeManifest, type WorkerProcess } from '../worker-process';
import type { Cluster } from './index';
import { resetFinishedRun } from './operator-reset';
import { rng } from '../seeded-rng';

export const SERVER_FAULTS = ['history', 'matching', 'frontend', 'postgres'] as const;
export type ServerFault = (typeof SERVER_FAULTS)[number];
export type FaultKind = ServerFault | 'worker';
export const RECOVERIES = ['reconcile', 'retry', 'escalate', 'fail'] as const;
export type Recovery = (typeof RECOVERIES)[number];

export interface Row {
  injected: number;
  /** Worker kills only: the kill landed inside a call (the tool had started, the activity had not completed). */
  killedMidCall: number;
  /** Runs in flight when at least one fault of this kind hit. */
  runs: number;
  completed: number;
  intended: number;
  landed: number;
  /** Two payments for one intended refund. */
  duplicated: number;
  /** No payment although the run recorded the refund as done. */
  lost: number;
  /** No payment, and the run ended the call failed although nothing was wrong with the tool. */
  dropped: number;
  /** Recovery `fail`: the call ended InDoubt after a crash, as declared (landed or not). */
  inDoubtAsDeclared: number;
}

export interface ClusterCampaignResult {
  rows: Record<FaultKind | 'all', Row>;
  byRecovery: Record<Recovery, { runs: number; intended: number; landed: number; inDoubt: number }>;
  /** Worker kills at a named point inside a call (before the send, after the commit, during reconcile) that fired. */
  killsInCall: number;
  /** Worker kills at a random moment that found one of the run's activities started on that worker. */
  randomKillsMidCall: number;
  /** Runs that did not end within their deadline (stuck). */
  unfinished: number;
  resentUnderSameKey: number;
  escalationsResolved: number;
  /** Operator resets of finished runs: made, whose reset run ended, refunds sent again, lost, calls adopted. */
  resets: { made: number; finished: number; sentAgain: number; lost: number; adopted: number };
  durationMs: number;
}

const emptyRow = (): Row => ({
  injected: 0,
  killedMidCall: 0,
  runs: 0,
  completed: 0,
  intended: 0,
  landed: 0,
  duplicated: 0,
  lost: 0,
  dropped: 0,
  inDoubtAsDeclared: 0,
});

function shuffle<T>(xs: T[], random: () => number): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/** Whether the server shows one of the run's activities started on the worker with this pid (not yet completed). */
async function startedOn(h: WorkflowHandle, pid: number): Promise<boolean> {
  try {
    const pending = (await h.describe()).raw.pendingActivities ?? [];
    return pending.some(
      (a) =>
        a.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED &&
        (a.lastWorkerIdentity ?? '').startsWith(`${pid}@`),
    );
  } catch {
    return false; // the server is down: not counted
  }
}

/** The example manifest with the refund tool declaring `recovery`, and short timeouts. */
function manifestFor(recovery: Recovery): Manifest {
  const base = loadManifest(path.resolve(__dirname, '..', '..', 'examples', 'support-desk', 'manifest.yaml')).manifest;
  return {
    ...base,
    tools: base.tools.map((t): ToolDecl =>
      t.id === 'tool://payments/refund'
        ? { ...t, recovery, timeouts: { ...t.timeouts, start_to_close: '3s' }, escalation: { deadline: '1h' } }
        : t,
    ),
  };
}

export interface ClusterCampaignOptions {
  cluster: Cluster;
  workflowBundle: string;
  workDir: string;
  /** Stop injecting server faults after this many (the campaign ends when the lanes drain). */
  serverFaults: number;
  /** ...and once the lanes have SIGKILLed this many workers. */
  workerKills: number;
  lanes?: number;
  callsPerRun?: number;
  seed?: number;
  /** Pause between server faults, ms (random in [min, max]). */
  faultGapMs?: [number, number];
  /** How long a killed service stays down, ms. */
  downMs?: [number, number];
  runDeadlineMs?: number;
  /** Finished runs an operator resets to a random completed workflow task, each served to its end. */
  resets?: number;
  log?: (line: string) => void;
}

interface RunRecord {
  recovery: Recovery;
  kinds: Set<FaultKind>;
  memos: string[];
  dir: string;
  result?: ToolRunResult;
  finished: boolean;
}

export async function runClusterCampaign(opts: ClusterCampaignOptions): Promise<ClusterCampaignResult> {
  const started = Date.now();
  const log = opts.log ?? (() => {});
  const random = rng(opts.seed ?? Date.now());
  const lanes = opts.lanes ?? 3;
  const calls = opts.callsPerRun ?? 2;
  const [gapMin, gapMax] = opts.faultGapMs ?? [4000, 12_000];
  const [downMin, downMax] = opts.downMs ?? [500, 4000];
  const address = opts.cluster.address;
  // An operator's credential on a secured cluster: it starts runs, reads their state and resolves escalations.
  const connection = await Connection.connect(opts.cluster.connectOptions('operator'));
  const workerEnv = opts.cluster.env('worker');
  const client = new Client({ connection, namespace: opts.cluster.namespace });
  const manifests = Object.fromEntries(RECOVERIES.map((r) => [r, manifestFor(r)])) as Record<Recovery, Manifest>;
  const injected: Record<FaultKind, number> = { history: 0, matching: 0, frontend: 0, postgres: 0, worker: 0 };
  const inFlight = new Set<RunRecord>();
  const records: RunRecord[] = [];
  let escalationsResolved = 0;
  const resets = { made: 0, finished: 0, sentAgain: 0, lost: 0, adopted: 0 };
  /** Worker kills at a named point inside a tool call (the rest are at random moments). */
  let killsInCall = 0;
  let randomKillsMidCall = 0;
  let serverDone = false;
  const workerTargetReached = () => injected.worker >= opts.workerKills;
  const hit = (kind: FaultKind, only?: RunRecord) => {
    injected[kind]++;
    for (const r of only ? [only] : inFlight) r.kinds.add(kind);
  };

  let cycle: ServerFault[] = [...SERVER_FAULTS];
  const serverFaults = async () => {
    while (injected.history + injected.matching + injected.frontend + injected.postgres < opts.serverFaults) {
      await sleep(gapMin + random() * (gapMax - gapMin));
      // Every kind once per cycle of four, in a random order: a short campaign hits each.
      const n = injected.history + injected.matching + injected.frontend + injected.postgres;
      if (n % SERVER_FAULTS.length === 0) cycle = shuffle([...SERVER_FAULTS], random);
      const kind = cycle[n % SERVER_FAULTS.length]!;
      hit(kind);
      await opts.cluster.kill(kind);
      await sleep(downMin + random() * (downMax - downMin));
      try {
        await opts.cluster.restart(kind);
      } catch (err) {
        log(`restart of ${kind} failed, trying once more: ${(err as Error).message.split('\n')[0]}`);
        await sleep(2000);
        await opts.cluster.restart(kind);
      }
      log(
        `server fault ${kind} (${injected.history + injected.matching + injected.frontend + injected.postgres}/${opts.serverFaults}); worker kills ${injected.worker}/${opts.workerKills}`,
      );
    }
    serverDone = true;
  };

  /** A person resolving an escalation: asks the payments provider whether the refund is there. */
  const operator = async (handle: WorkflowHandle, rec: RunRecord) => {
    let pending;
    try {
      pending = await handle.query(pendingEscalations);
    } catch {
      return; // no worker right now, or the server is down: ask again later
    }
    for (const p of pending) {
      if (p.kind !== 'in_doubt') continue;
      const memo = rec.memos[p.position];
      const payment = paymentsStore(rec.dir)
        .all()
        .find((x) => x.memo === memo);
      try {
        await handle.executeUpdate(resolveEscalation, {
          args: [
            payment
              ? {
                  effectKey: p.effectKey,
                  decision: 'landed',
                  output: { payment_id: payment.id, status: 'refunded', duplicate: false },
                  by: 'chaos-operator',
                }
              : { effectKey: p.effectKey, decision: 'retry', by: 'chaos-operator' },
          ],
        });
        escalationsResolved++;
      } catch {
        // resolved meanwhile, or the server is down: the next round sees it
      }
    }
  };

  const lane = async (laneNo: number) => {
    let runNo = 0;
    while (!(serverDone && workerTargetReached())) {
      const recovery = RECOVERIES[(laneNo + runNo++) % RECOVERIES.length]!;
      const dir = fs.mkdtempSync(path.join(opts.workDir, `lane${laneNo}-${recovery}-`));
      const manifestFile = writeManifest(dir, manifests[recovery]);
      const taskQueue = `chaos-cluster-${randomUUID()}`;
      const rec: RunRecord = {
        recovery,
        kinds: new Set(),
        memos: Array.from({ length: calls }, (_, i) => `cc-${laneNo}-${runNo}-${i}-${randomUUID().slice(0, 8)}`),
        dir,
        finished: false,
      };
      records.push(rec);
      inFlight.add(rec);
      const spawn = (killAt?: string): WorkerProcess =>
        spawnWorker({
          address,
          manifestFile,
          taskQueue,
          storeDir: dir,
          workflowBundle: opts.workflowBundle,
          killAt,
          env: workerEnv,
        });
      // One workflow id across retries: a start that reached the server before the frontend died is not started twice.
      const workflowId = `chaos-cluster-${randomUUID()}`;
      const h = client.workflow.getHandle(workflowId);
      for (let i = 0; ; i++) {
        try {
          await client.workflow.start('toolRun', {
            taskQueue,
            workflowId,
            args: [
              {
                grants: ['tool://payments/refund'],
                principal: 'agent:chaos',
                continueOnError: true,
                calls: rec.memos.map((memo, j) => ({
                  toolId: 'tool://payments/refund',
                  args: { account_id: 'acct_alice_001', amount_cents: 100 + j, currency: 'EUR', memo },
                })),
              },
            ],
          });
          break;
        } catch (err) {
          if (err instanceof WorkflowExecutionAlreadyStartedError) break;
          if (i > 120) throw err;
          await sleep(1000); // the frontend or PostgreSQL is down: start when it is back
        }
      }
      const deadline = Date.now() + (opts.runDeadlineMs ?? 300_000);
      let done = false;
      const result = (async () => {
        // The result, waited for across server faults: only the run's own end counts.
        for (;;) {
          try {
            rec.result = (await h.result()) as ToolRunResult;
            break;
          } catch (err) {
            if (err instanceof WorkflowFailedError) break;
            if (Date.now() > deadline) return; // stuck: counted as unfinished
            await sleep(1000);
          }
        }
        done = true;
      })();
      // 1-3 workers SIGKILLed during the run (at a named point or a random moment) while the target is not met.
      // Most at a named point inside a call: a refund takes milliseconds, so a kill from outside rarely lands in
      // one. The point is one this run reaches: only a reconcile run reconciles, and only after an earlier kill.
      const kills = workerTargetReached() ? 0 : 1 + Math.floor(random() * 3);
      let reconciling = false;
      for (let k = 0; k < kills && !done && Date.now() < deadline; k++) {
        const byPoint = random() < 0.7;
        const points = reconciling
          ? (['during_reconcile', 'before_call', 'after_commit'] as const)
          : (['before_call', 'after_commit'] as const);
        const point = byPoint ? points[Math.floor(random() * points.length)] : undefined;
        const w = spawn(point);
        if (byPoint) {
          // An escalated call waits for a person before any other call runs: answer while waiting.
          const until = Date.now() + 30_000;
          let ended: Awaited<typeof w.exited> | undefined;
          while (!ended && !done && Date.now() < until) {
            ended = await Promise.race([w.exited, result.then(() => undefined), sleep(1000).then(() => undefined)]);
            if (!ended && recovery === 'escalate' && !done) await operator(h, rec);
          }
          const fired = ended?.signal === 'SIGKILL';
          if (fired) {
            hit('worker', rec);
            killsInCall++;
            reconciling = recovery === 'reconcile';
          }
          log(
            `lane ${laneNo}: worker kill at ${point} ${fired ? 'fired' : done ? 'not reached: run ended' : 'not reached in 30s'}`,
          );
        } else {
          // A random moment once the worker polls, so the kill hits a worker that may be mid-call.
          const polling = Date.now() + 60_000;
          while (!w.output().includes(' polling ') && w.child.exitCode === null && !done && Date.now() < polling)
            await sleep(100);
          await Promise.race([sleep(random() * 2500), w.exited, result]);
          if (w.child.exitCode === null && w.child.signalCode === null) {
            const midCall = await startedOn(h, w.pid);
            w.child.kill('SIGKILL');
            await w.exited;
            hit('worker', rec);
            if (midCall) {
              randomKillsMidCall++;
              reconciling = recovery === 'reconcile';
            }
          }
        }
        if (recovery === 'escalate') await operator(h, rec);
        await w.stop();
      }
      // Then a worker that stays (respawned if the server's faults make it exit) until the run ends.
      let last = spawn();
      while (!done && Date.now() < deadline) {
        await Promise.race([result, sleep(1000)]);
        if (recovery === 'escalate' && !done) await operator(h, rec);
        if (!done && (last.child.exitCode !== null || last.child.signalCode !== null)) last = spawn();
      }
      await last.stop();
      if (done && rec.result && resets.made < (opts.resets ?? 0)) {
        const resetNo = ++resets.made;
        const r = await resetFinishedRun({
          client,
          namespace: opts.cluster.namespace,
          handle: h,
          dir,
          memos: rec.memos,
          random,
          spawn: () => spawn(),
          answer: (reset) => operator(reset, rec),
          deadlineMs: opts.runDeadlineMs ?? 300_000,
        }).catch((err: unknown) => {
          log(`lane ${laneNo}: reset failed: ${(err as Error).message.split('\n')[0]}`);
          return undefined;
        });
        if (r) {
          if (r.finished) resets.finished++;
          resets.sentAgain += r.sentAgain;
          resets.lost += r.lost;
          resets.adopted += r.adopted;
        }
        log(
          `lane ${laneNo}: operator reset ${resetNo}: ${r ? `${r.finished ? 'ended' : 'NOT FINISHED'}, ${r.adopted} adopted, ${r.sentAgain} sent again, ${r.lost} lost` : 'not made'}`,
        );
      }
      rec.finished = done;
      inFlight.delete(rec);
      const r = rec.result;
      log(
        `lane ${laneNo} run ${runNo} (${recovery}): ${done ? (r ? r.status : 'workflow failed') : 'NOT FINISHED'}; faults: ${[...rec.kinds].join(',') || 'none'}`,
      );
    }
  };

  try {
    await Promise.all([serverFaults(), ...Array.from({ length: lanes }, (_, i) => lane(i))]);
  } finally {
    await connection.close();
  }

  // What landed.
  const rows = Object.fromEntries(
    [...SERVER_FAULTS, 'worker', 'all'].map((k) => [k, emptyRow()]),
  ) as ClusterCampaignResult['rows'];
  for (const k of Object.keys(injected) as FaultKind[]) rows[k].injected = injected[k];
  rows.all.injected = Object.values(injected).reduce((a, b) => a + b, 0);
  rows.worker.killedMidCall = rows.all.killedMidCall = killsInCall + randomKillsMidCall;
  const byRecovery = Object.fromEntries(
    RECOVERIES.map((r) => [r, { runs: 0, intended: 0, landed: 0, inDoubt: 0 }]),
  ) as ClusterCampaignResult['byRecovery'];
  let resentUnderSameKey = 0;
  let unfinished = 0;
  for (const rec of records) {
    const store = paymentsStore(rec.dir);
    const payments = store.all();
    resentUnderSameKey += store.repeats();
    if (!rec.finished) unfinished++;
    const targets: Row[] = [rows.all, ...[...rec.kinds].map((k) => rows[k])];
    const br = byRecovery[rec.recovery];
    br.runs++;
    for (const row of targets) {
      row.runs++;
      if (rec.finished && rec.result) row.completed++;
    }
    rec.memos.forEach((memo, i) => {
      const n = payments.filter((p) => p.memo === memo).length;
      const entry = rec.result?.journal.find((e) => e.position === i);
      const inDoubt = rec.recovery === 'fail' && entry?.outcome === 'in_doubt';
      br.intended++;
      if (n > 0) br.landed++;
      if (inDoubt) br.inDoubt++;
      for (const row of targets) {
        row.intended++;
        if (n > 0) row.landed++;
        if (n > 1) row.duplicated += n - 1;
        if (inDoubt) row.inDoubtAsDeclared++;
        else if (n === 0 && entry?.outcome === 'ok') row.lost++;
        else if (n === 0) row.dropped++;
      }
    });
  }
  return {
    rows,
    byRecovery,
    killsInCall,
    randomKillsMidCall,
    unfinished,
    resentUnderSameKey,
    escalationsResolved,
    resets,
    durationMs: Date.now() - started,
  };
}

export function formatClusterCampaign(r: ClusterCampaignResult): string {
  const cols: (keyof Row)[] = [
    'injected',
    'killedMidCall',
    'runs',
    'completed',
    'intended',
    'landed',
    'duplicated',
    'lost',
    'dropped',
    'inDoubtAsDeclared',
  ];
  const header = ['fault', ...cols];
  const lines = (Object.keys(r.rows) as (keyof ClusterCampaignResult['rows'])[]).map((k) => [
    k,
    ...cols.map((c) => (c === 'killedMidCall' && k !== 'worker' && k !== 'all' ? '-' : String(r.rows[k][c]))),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) => '| ' + cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ') + ' |';
  const rec = Object.entries(r.byRecovery)
    .map(([k, v]) => `${k}: ${v.runs} runs, ${v.landed}/${v.intended} landed, ${v.inDoubt} in doubt`)
    .join('; ');
  return [
    fmt(header),
    fmt(widths.map((w) => '-'.repeat(w))),
    ...lines.map(fmt),
    `by recovery: ${rec}`,
    ...(r.resets.made > 0
      ? [
          `operator resets ${r.resets.made}: reset runs ended ${r.resets.finished}, calls adopted ${r.resets.adopted}, refunds sent again ${r.resets.sentAgain}, lost ${r.resets.lost}`,
        ]
      : []),
    `worker kills mid-call ${r.rows.worker.killedMidCall} of ${r.rows.worker.injected} (at a named point ${r.killsInCall}, at a random moment ${r.randomKillsMidCall}); unfinished runs ${r.unfinished}; resent under the same key ${r.resentUnderSameKey}; escalations resolved ${r.escalationsResolved}; ${(r.durationMs / 1000).toFixed(0)}s`,
  ].join('\n');
}
