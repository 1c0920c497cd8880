// `npm start -- --once` against the multi-service cluster on PostgreSQL, as docs/cluster.md tells users.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../../common/search-attributes';
import { startTestCluster, type TestCluster } from '../support/cluster';

const root = path.resolve(__dirname, '..', '..');
let tc: TestCluster;

beforeAll(async () => {
  tc = await startTestCluster('cluster-demo', { ui: true });
});
afterAll(async () => {
  await tc?.close();
});

function npmStart(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'scripts', 'start.ts'), '--once'], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

it('registers the namespace and every toolplane search attribute, checked through the frontend', async () => {
  const connection = await Connection.connect(tc.cluster.connectOptions('operator'));
  try {
    const listed = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
    expect(Object.keys(listed.customAttributes ?? {})).toEqual(
      expect.arrayContaining(SEARCH_ATTRIBUTES.map((a) => a.name)),
    );
  } finally {
    await connection.close();
  }
});

it('runs the demo on the secured cluster with TEMPORAL_ADDRESS, TLS files and tokens set: three runs complete, the injection is refused, the UI links them', async () => {
  // A run starter's credential for the runs, a worker's for npm start's worker.
  const { code, out } = await npmStart({
    ...tc.cluster.env('starter'),
    TOOLPLANE_WORKER_API_KEY: tc.cluster.credentials!.tokens.worker,
    TEMPORAL_UI_URL: tc.cluster.uiUrl,
    TOOLPLANE_DATA_DIR: path.join(tc.dir, 'demo'),
    TOOLPLANE_STORE_DIR: path.join(tc.dir, 'demo', 'stores'),
  });
  expect({ code, tail: code === 0 ? '' : out.slice(-3000) }).toEqual({ code: 0, tail: '' });
  expect(out.match(/^ {2}completed: /gm)).toHaveLength(3);
  expect(out).toMatch(/tool:\/\/payments\/refund {2}refused by protected_field:\/account_id/);
  expect(out).toContain(`Web UI: ${tc.cluster.uiUrl}/namespaces/default/workflows/support-desk-refund-`);

  // The runs are in the cluster's PostgreSQL visibility store, found by toolplane's search attribute.
  const client = new Client({ connection: await Connection.connect(tc.cluster.connectOptions('operator')) });
  try {
    const deadline = Date.now() + 60_000;
    let ids: string[] = [];
    while (Date.now() < deadline) {
      ids = [];
      for await (const w of client.workflow.list({ query: `ToolplanePrincipal = 'agent:support-desk'` }))
        ids.push(w.workflowId);
      if (ids.length >= 2) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(ids.filter((id) => id.startsWith('support-desk-'))).toHaveLength(2);
  } finally {
    await client.connection.close();
  }
});
