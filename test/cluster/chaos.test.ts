// The short cluster fault campaign: every server-side fault kind (history, matching, frontend,
// PostgreSQL) and worker kills while runs of each recovery are in flight; `npm run chaos -- --cluster`
// runs the long one. Two finished runs are reset by an operator among the faults (issue 50).
import { formatClusterCampaign, runClusterCampaign, SERVER_FAULTS } from '../../scripts/cluster/campaign';
import { startTestCluster, type TestCluster } from '../support/cluster';

let tc: TestCluster;

beforeAll(async () => {
  tc = await startTestCluster('cluster-chaos');
});
afterAll(async () => {
  await tc?.close();
});

it('SIGKILLing services, PostgreSQL and workers duplicates, loses and drops nothing', async () => {
  const r = await runClusterCampaign({
    cluster: tc.cluster,
    workflowBundle: tc.workflowBundle,
    workDir: tc.dir,
    serverFaults: SERVER_FAULTS.length,
    workerKills: 4,
    lanes: 4,
    callsPerRun: 2,
    seed: 20261201,
    faultGapMs: [2000, 6000],
    resets: 2,
  });
  console.log(`cluster chaos campaign (short):\n${formatClusterCampaign(r)}`);
  for (const kind of SERVER_FAULTS) expect({ kind, injected: r.rows[kind].injected }).toEqual({ kind, injected: 1 });
  expect(r.rows.worker.injected).toBeGreaterThanOrEqual(4);
  expect(r.unfinished).toBe(0);
  expect(r.rows.all).toMatchObject({ duplicated: 0, lost: 0, dropped: 0 });
  expect(r.rows.all.completed).toBe(r.rows.all.runs);
  // Every recovery was in flight; those that recover by themselves landed every refund.
  for (const rec of ['reconcile', 'retry', 'escalate'] as const)
    expect({ rec, landed: r.byRecovery[rec].landed }).toEqual({ rec, landed: r.byRecovery[rec].intended });
  expect(r.byRecovery.fail.runs).toBeGreaterThan(0);
  // Operators reset finished runs among the faults: each reset run ends, and nothing is sent again.
  expect(r.resets).toMatchObject({ made: 2, finished: 2, sentAgain: 0, lost: 0 });
});
