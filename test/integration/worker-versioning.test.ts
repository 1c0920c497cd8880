// Worker Versioning on the dev server: ToolplanePlugin's `deployment` makes the worker one version of a
// worker deployment, and toolplane's workflows are PINNED by the worker's default. The deploy itself
// (version A's runs finishing on A while B is current) is test/cluster/versioning.test.ts.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';
import { createTools } from '../../examples/support-desk/tools';
import { ToolplanePlugin, type ToolplaneDeployment } from '../../plugin';
import { spawnWorker, type WorkerProcess } from '../../scripts/worker-process';
import type { ToolRunResult } from '../../workflows/tool-run';
import { runAgent } from '../support/agent';
import { makeCurrent, tasksOf, versionOf } from '../support/deployment';
import { supportDesk } from '../support/desk';
import { EXAMPLE_MANIFEST, exampleManifest, harness, testAddress, testDir, type Harness } from '../support/env';
import { waitFor } from '../support/wait';

const manifest = exampleManifest();

describe('ToolplanePlugin with a worker deployment', () => {
  const plugin = (deployment?: ToolplaneDeployment) =>
    new ToolplanePlugin({ manifest, tools: createTools(), deployment, log: () => {} });
  const configured = (p: ToolplanePlugin, options: Partial<WorkerOptions> = {}) =>
    p.configureWorker({ ...options, taskQueue: 'q' });

  it("sets the worker's deployment options, PINNED by default", () => {
    expect(configured(plugin({ deploymentName: 'desk', buildId: 'b1' })).workerDeploymentOptions).toEqual({
      version: { deploymentName: 'desk', buildId: 'b1' },
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'PINNED',
    });
    expect(
      configured(plugin({ deploymentName: 'desk', buildId: 'b1', defaultVersioningBehavior: 'AUTO_UPGRADE' }))
        .workerDeploymentOptions?.defaultVersioningBehavior,
    ).toBe('AUTO_UPGRADE');
    // Without one the worker stays unversioned, as Temporal's default.
    expect(configured(plugin()).workerDeploymentOptions).toBeUndefined();
  });

  it('refuses worker options that name another version, or the deprecated build-id versioning', () => {
    const p = plugin({ deploymentName: 'desk', buildId: 'b1' });
    const same = {
      version: { deploymentName: 'desk', buildId: 'b1' },
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'PINNED',
    } as const;
    expect(configured(p, { workerDeploymentOptions: same }).workerDeploymentOptions).toEqual(same);
    expect(() =>
      configured(p, { workerDeploymentOptions: { ...same, version: { deploymentName: 'desk', buildId: 'b2' } } }),
    ).toThrow(expect.objectContaining({ code: 'DeploymentConflict' }));
    expect(() =>
      configured(p, { workerDeploymentOptions: { ...same, defaultVersioningBehavior: 'AUTO_UPGRADE' } }),
    ).toThrow(expect.objectContaining({ code: 'DeploymentConflict' }));
    expect(() => configured(p, { useVersioning: true, buildId: 'b1' })).toThrow(
      expect.objectContaining({ code: 'DeploymentConflict' }),
    );
  });

  it.each([
    [{ deploymentName: 'desk.prod', buildId: 'b1' }, /contains "\." or ":"/],
    [{ deploymentName: 'desk:prod', buildId: 'b1' }, /contains "\." or ":"/],
    [{ deploymentName: '', buildId: 'b1' }, /deployment name is empty/],
    [{ deploymentName: 'desk', buildId: ' ' }, /build id is empty/],
    [{ deploymentName: 'desk', buildId: '__b1' }, /starts with "__"/],
    [{ deploymentName: 'desk', buildId: 'b1', defaultVersioningBehavior: 'NEVER' }, /neither PINNED nor AUTO_UPGRADE/],
  ])('refuses %j before the worker exists', (deployment, message) => {
    expect(() => plugin(deployment as ToolplaneDeployment)).toThrow(message);
  });
});

describe('a versioned worker on the dev server', () => {
  let h: Harness;
  const deploymentName = `toolplane-it-${randomUUID().slice(0, 8)}`;
  const { tools } = supportDesk(testDir('worker-versioning'));

  beforeAll(async () => {
    h = await harness(`versioning-${randomUUID()}`);
    await h.runWorker({ manifest, tools, deployment: { deploymentName, buildId: 'v1' } });
    // A versioned worker receives new runs only once its version is current.
    await makeCurrent(h.client, deploymentName, 'v1');
  });
  afterAll(() => h.close());

  it('pins agentRun and toolRun to the version that ran them', async () => {
    const { workflowId: agentId, result } = await runAgent(h, manifest, {
      prompt: 'Handle ticket T-101.',
      turns: [{ tool_calls: [{ name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } }] }, { final: 'done' }],
    });
    expect(result.answer).toBe('done');
    const toolId = `versioning-tool-${randomUUID()}`;
    const toolResult: ToolRunResult = await h.client.workflow.execute('toolRun', {
      taskQueue: h.taskQueue,
      workflowId: toolId,
      args: [
        { principal: 'agent:test', calls: [{ toolId: 'tool://tickets/read_ticket', args: { ticket_id: 'T-101' } }] },
      ],
    });
    expect(toolResult.status).toBe('completed');
    for (const id of [agentId, toolId]) {
      expect(await versionOf(h.client, id)).toEqual({ behavior: 'PINNED', deploymentName, buildId: 'v1' });
      const t = tasksOf(await h.client.workflow.getHandle(id).fetchHistory());
      expect(t.failedWorkflowTasks).toEqual([]);
      expect(new Set(t.workflowTasks.map((w) => `${w.buildId} ${w.behavior}`))).toEqual(new Set(['v1 PINNED']));
    }
  });
});

describe('toolplane worker: deployment flags and environment', () => {
  const storeDir = testDir('worker-versioning-cli');
  const workers: WorkerProcess[] = [];
  afterAll(async () => {
    for (const w of workers) await w.stop();
  });
  const spawn = (env: Record<string, string>, args: string[] = []) => {
    const w = spawnWorker({
      address: testAddress(),
      manifestFile: EXAMPLE_MANIFEST,
      taskQueue: `versioning-cli-${randomUUID()}`,
      storeDir,
      workflowBundle: process.env.TOOLPLANE_TEST_BUNDLE,
      // Neither this suite's environment nor the machine's decides what these tests pass.
      env: {
        TOOLPLANE_DEPLOYMENT_NAME: '',
        TOOLPLANE_BUILD_ID: '',
        TEMPORAL_DEPLOYMENT_NAME: '',
        TEMPORAL_WORKER_BUILD_ID: '',
        ...env,
      },
      args,
    });
    workers.push(w);
    return w;
  };

  it('refuses a build id without a deployment name, before connecting', async () => {
    const w = spawn({}, ['--build-id', 'b1']);
    expect(await w.exited).toEqual({ code: 1, signal: null });
    expect(w.output()).toMatch(/needs both a deployment name and a build id; only the build id is set/);
  });

  it("runs as the version the Worker Controller's variables name (TEMPORAL_DEPLOYMENT_NAME, TEMPORAL_WORKER_BUILD_ID)", async () => {
    const deploymentName = `toolplane-cli-${randomUUID().slice(0, 8)}`;
    const w = spawn({ TEMPORAL_DEPLOYMENT_NAME: deploymentName, TEMPORAL_WORKER_BUILD_ID: 'c1' });
    await waitFor('the worker to poll', 120_000, () => w.output().includes(' polling ') || w.child.exitCode !== null);
    expect(w.output()).toContain(`as version c1 of worker deployment ${deploymentName}`);
    // The server knows the version from the worker's polls: it can be made current.
    const client = new Client({ connection: await Connection.connect({ address: testAddress() }) });
    try {
      await makeCurrent(client, deploymentName, 'c1');
      const described = await client.workflowService.describeWorkerDeployment({
        namespace: 'default',
        deploymentName,
      });
      expect(described.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId).toBe('c1');
    } finally {
      await client.connection.close();
    }
  });
});
