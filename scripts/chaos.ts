/**
 * The chaos campaign: runs of several money-moving calls, each worker SIGKILLed at random
 * points (a named fault point or a random moment), then counts what landed.
 *
 *   npm run chaos -- --runs 20 [--calls 3] [--seed 7] [--recovery retry] [--kills-per-run 6] [--maximum-attempts 1]
 *
 * With --cluster, against a multi-service cluster on PostgreSQL (scripts/cluster/): its history,
 * matching and frontend services and PostgreSQL are SIGKILLed and restarted at random while lanes of
 * runs (each recovery in turn) SIGKILL their own workers; see scripts/cluster/campaign.ts.
 *
 *   npm run chaos -- --cluster [--server-faults 50] [--worker-kills 200] [--lanes 3] [--resets 20] [--seed 7]
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Command } from 'commander';
import { loadManifest } from '../runtime/manifest-file';
import type { Manifest } from '../catalog/manifest';
import { paymentsStore } from '../examples/support-desk/payments-store';
import type { ToolRunResult } from '../workflows/tool-run';
import { writeWorkflowBundle } from './workflow-bundle';
import { startCluster } from './cluster/index';
import { formatClusterCampaign, runClusterCampaign } from './cluster/campaign';
import { freePort, startDevServer } from './dev-server';
import { spawnWorker, writeManifest, type WorkerProcess } from './worker-process';
import { rng } from './seeded-rng';

export interface CampaignCounts {
  runs: number;
  kills: number;
  intended: number;
  landed: number;
  /** Two payments for one intended call. Must be 0. */
  duplicates: number;
  /** An intended call with no payment after its run completed. Must be 0. */
  lost: number;
  /** Calls sent again under a key the provider already held (absorbed by the key). */
  resentUnderSameKey: number;
  recoveries: Record<string, number>;
  /** Calls whose journal entry did not end `ok`. */
  failedCalls: number;
  /** Sends the tool answered with a failure, and sends no worker finished, summed over the journals. */
  toolFailures: number;
  lostSends: number;
}

const POINTS = ['before_call', 'after_commit', 'during_reconcile'] as const;

export async function runCampaign(opts: {
  address: string;
  workflowBundle: string;
  runs: number;
  callsPerRun?: number;
  seed?: number;
  workDir?: string;
  log?: (line: string) => void;
  /** The refund tool's declared recovery (the example manifest's `reconcile` unless given). */
  recovery?: 'reconcile' | 'retry';
  /** Each run kills between 1 and this many workers (3 unless given). */
  killsPerRun?: number;
  /** The refund's declared `retry.maximum_attempts`, in place of the example manifest's. */
  maximumAttempts?: number;
}): Promise<CampaignCounts> {
  const log = opts.log ?? (() => {});
  const random = rng(opts.seed ?? Date.now());
  const calls = opts.callsPerRun ?? 3;
  const base = loadManifest(path.resolve(__dirname, '..', 'examples', 'support-desk', 'manifest.yaml')).manifest;
  const manifest: Manifest = {
    ...base,
    tools: base.tools.map((t) => ({
      ...t,
      timeouts: { ...t.timeouts, start_to_close: '2s' },
      ...(opts.recovery && t.id === 'tool://payments/refund' ? { recovery: opts.recovery } : {}),
      ...(opts.maximumAttempts !== undefined && t.id === 'tool://payments/refund'
        ? { retry: { ...t.retry, maximum_attempts: opts.maximumAttempts } }
        : {}),
    })),
  };
  const client = new Client({ connection: await Connection.connect({ address: opts.address }) });
  const counts: CampaignCounts = {
    runs: 0,
    kills: 0,
    intended: 0,
    landed: 0,
    duplicates: 0,
    lost: 0,
    resentUnderSameKey: 0,
    recoveries: {},
    failedCalls: 0,
    toolFailures: 0,
    lostSends: 0,
  };
  const workDir = opts.workDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'toolplane-chaos-'));

  try {
    for (let run = 0; run < opts.runs; run++) {
      const dir = fs.mkdtempSync(path.join(workDir, `run-${run}-`));
      const manifestFile = writeManifest(dir, manifest);
      const taskQueue = `chaos-${randomUUID()}`;
      const memos = Array.from({ length: calls }, (_, i) => `chaos-${run}-${i}-${randomUUID().slice(0, 8)}`);
      const handle = await client.workflow.start('toolRun', {
        taskQueue,
        workflowId: `chaos-${randomUUID()}`,
        args: [
          {
            manifest,
            grants: manifest.tools.map((t) => t.id),
            principal: 'agent:chaos',
            calls: memos.map((memo, i) => ({
              toolId: 'tool://payments/refund',
              args: { account_id: 'acct_alice_001', amount_cents: 100 + i, currency: 'EUR', memo },
            })),
          },
        ],
      });
      let done = false;
      const result = handle.result().finally(() => (done = true));
      const kills = 1 + Math.floor(random() * (opts.killsPerRun ?? 3));
      for (let k = 0; k < kills && !done; k++) {
        const byPoint = random() < 0.5;
        const killAt = byPoint ? POINTS[Math.floor(random() * POINTS.length)] : undefined;
        const w: WorkerProcess = spawnWorker({
          address: opts.address,
          manifestFile,
          taskQueue,
          storeDir: dir,
          workflowBundle: opts.workflowBundle,
          killAt,
        });
        if (byPoint) {
          // The worker kills itself at the point, or the run gets past it without reaching it.
          const ended = await Promise.race([
            w.exited,
            result.then(
              () => undefined,
              () => undefined,
            ),
            sleep(15_000),
          ]);
          if (ended && 'signal' in ended && ended.signal === 'SIGKILL') counts.kills++;
          await w.stop();
        } else {
          await Promise.race([sleep(300 + random() * 3000), w.exited]);
          if (w.child.exitCode === null && w.child.signalCode === null) {
            w.child.kill('SIGKILL');
            await w.exited;
            counts.kills++;
          }
        }
      }
      const last = spawnWorker({
        address: opts.address,
        manifestFile,
        taskQueue,
        storeDir: dir,
        workflowBundle: opts.workflowBundle,
      });
      let outcome: ToolRunResult;
      try {
        outcome = (await Promise.race([
          result,
          sleep(120_000).then(() => Promise.reject(new Error(`run ${handle.workflowId} did not finish in 120s`))),
        ])) as ToolRunResult;
      } finally {
        await last.stop();
      }
      const store = paymentsStore(dir);
      const landed = store.all();
      counts.runs++;
      counts.intended += memos.length;
      for (const memo of memos) {
        const n = landed.filter((p) => p.memo === memo).length;
        if (n === 0) counts.lost++;
        else counts.landed++;
        if (n > 1) counts.duplicates += n - 1;
      }
      counts.resentUnderSameKey += store.repeats();
      for (const e of outcome.journal) {
        counts.recoveries[e.recovery] = (counts.recoveries[e.recovery] ?? 0) + 1;
        if (e.outcome !== 'ok') counts.failedCalls++;
        counts.toolFailures += e.toolFailures ?? 0;
        counts.lostSends += e.lostSends ?? 0;
      }
      log(
        `run ${run + 1}/${opts.runs}: ${outcome.status}, ${landed.length}/${memos.length} landed, kills so far ${counts.kills}`,
      );
    }
  } finally {
    await client.connection.close();
  }
  return counts;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}

export function formatCounts(c: CampaignCounts): string {
  const recov = Object.entries(c.recoveries)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return [
    `runs ${c.runs}, worker kills ${c.kills}`,
    `effects intended ${c.intended}, landed ${c.landed}, duplicates ${c.duplicates}, lost ${c.lost}`,
    `resent under the same key ${c.resentUnderSameKey}; recovery paths: ${recov}`,
    `calls not ok ${c.failedCalls}; sends the tool failed ${c.toolFailures}, sends no worker finished ${c.lostSends}`,
  ].join('\n');
}

async function bundle(dir: string): Promise<string> {
  const file = path.join(dir, 'bundle.js');
  await writeWorkflowBundle(file);
  return file;
}

async function clusterMain(o: ChaosOptions, dir: string): Promise<void> {
  const cluster = await startCluster({ dataDir: path.join(dir, 'cluster'), ui: false, log: console.log });
  try {
    const workflowBundle = await bundle(dir);
    console.log(
      `chaos --cluster: ${o.serverFaults} server faults, ${o.workerKills} worker kills, ${o.lanes} lanes of ${o.calls} refunds per run, seed ${o.seed}`,
    );
    const r = await runClusterCampaign({
      cluster,
      workflowBundle,
      workDir: dir,
      serverFaults: Number(o.serverFaults),
      workerKills: Number(o.workerKills),
      lanes: Number(o.lanes),
      callsPerRun: Number(o.calls),
      seed: Number(o.seed),
      resets: Number(o.resets),
      log: console.log,
    });
    console.log(formatClusterCampaign(r));
    const a = r.rows.all;
    const resetsHeld = r.resets.finished === r.resets.made && r.resets.sentAgain === 0 && r.resets.lost === 0;
    process.exitCode =
      a.duplicated === 0 && a.lost === 0 && a.dropped === 0 && r.unfinished === 0 && resetsHeld ? 0 : 1;
  } finally {
    await cluster.stop();
  }
}

interface ChaosOptions {
  runs: string;
  calls: string;
  seed: string;
  cluster?: boolean;
  serverFaults: string;
  workerKills: string;
  resets: string;
  lanes: string;
  recovery?: 'reconcile' | 'retry';
  killsPerRun: string;
  maximumAttempts?: string;
}

async function main(): Promise<void> {
  const o = new Command()
    .option('--runs <n>', 'runs in the campaign', '10')
    .option('--calls <n>', 'refunds per run', '3')
    .option('--seed <n>', 'random seed', String(Date.now() % 100000))
    .option('--cluster', 'against a multi-service cluster on PostgreSQL, with server faults too')
    .option('--server-faults <n>', 'with --cluster: SIGKILLs of history, matching, frontend and PostgreSQL', '50')
    .option('--worker-kills <n>', 'with --cluster: worker SIGKILLs (at least)', '200')
    .option('--lanes <n>', 'with --cluster: runs in flight at once', '3')
    .option('--resets <n>', 'with --cluster: finished runs an operator resets to a random workflow task', '0')
    .option('--recovery <recovery>', "without --cluster: the refund's declared recovery, reconcile or retry")
    .option('--kills-per-run <n>', 'without --cluster: each run kills between 1 and this many workers', '3')
    .option('--maximum-attempts <n>', "without --cluster: the refund's declared retry.maximum_attempts")
    .parse(process.argv)
    .opts<ChaosOptions>();
  if (o.recovery !== undefined && o.recovery !== 'reconcile' && o.recovery !== 'retry')
    throw new Error(`--recovery: reconcile or retry, not ${String(o.recovery)}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolplane-chaos-'));
  if (o.cluster) {
    fs.chmodSync(dir, 0o755); // PostgreSQL runs as its own user when we are root
    try {
      return await clusterMain(o, dir);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  const server = await startDevServer({
    port: await freePort(),
    uiPort: await freePort(),
    dbFile: path.join(dir, 'temporal.sqlite'),
    log: () => {},
  });
  try {
    const workflowBundle = await bundle(dir);
    console.log(`chaos: ${o.runs} runs of ${o.calls} refunds, seed ${o.seed}`);
    const counts = await runCampaign({
      address: server.address,
      workflowBundle,
      runs: Number(o.runs),
      callsPerRun: Number(o.calls),
      seed: Number(o.seed),
      workDir: dir,
      log: console.log,
      ...(o.recovery ? { recovery: o.recovery } : {}),
      killsPerRun: Number(o.killsPerRun),
      ...(o.maximumAttempts !== undefined ? { maximumAttempts: Number(o.maximumAttempts) } : {}),
    });
    console.log(formatCounts(counts));
    // A `retry` tool is sent again under the same key by design (the key absorbs it); a `reconcile` one never.
    const resentOk = o.recovery === 'retry' || counts.resentUnderSameKey === 0;
    process.exitCode = counts.duplicates === 0 && counts.lost === 0 && counts.failedCalls === 0 && resentOk ? 0 : 1;
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
