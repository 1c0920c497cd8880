// A namespace without toolplane's search attributes is noticed when a worker or a client starts, with the
// exact command that registers them, before any run could get stuck after its effects landed.
import { randomUUID } from 'node:crypto';
import { Client, WorkflowNotFoundError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { ToolplanePlugin } from '../../plugin';
import { msToTs } from '@temporalio/common/lib/time';
import { indexedValueType } from '../../scripts/cluster/namespace';
import { SEARCH_ATTRIBUTES } from '../../common/search-attributes';
import { startToolRun, SearchAttributesMissing, type ToolRunResult } from '../../client';
import { createTools } from '../../examples/support-desk/tools';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { waitFor } from '../support/wait';

describe('a namespace without the search attributes', () => {
  let h: Harness;
  const namespace = `bare-${randomUUID().slice(0, 8)}`;
  const manifest = exampleManifest();
  const command = (ns: string) =>
    `temporal operator search-attribute create --namespace ${ns} ` +
    SEARCH_ATTRIBUTES.map((a) => `--name ${a.name} --type ${a.cliType}`).join(' ');
  let client: Client;

  beforeAll(async () => {
    h = await harness(`search-attributes-${randomUUID()}`);
    await h.client.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    client = new Client({ connection: h.client.connection, namespace });
    await waitFor(`namespace ${namespace} to be served`, 60_000, () =>
      client.workflowService.describeNamespace({ namespace }).then(() => true),
    );
    process.env.TOOLPLANE_STORE_DIR = testDir('search-attributes');
  });
  afterAll(() => h.close());

  it('a worker refuses to run, naming the command that registers them', async () => {
    const err = await h.startWorker({ manifest, tools: createTools(), namespace }).catch((e: unknown) => e);
    expect(SearchAttributesMissing.is(err)).toBe(true);
    expect((err as Error).message).toContain(command(namespace));

    // A worker of your own with the plugin (every run of your workflows that opens a StepCtx labels
    // itself with them): Worker.create refuses, before the worker exists.
    const own = await Worker.create({
      connection: h.native,
      namespace,
      taskQueue: `${h.taskQueue}-own`,
      workflowBundle: { codePath: process.env.TOOLPLANE_TEST_BUNDLE! },
      plugins: [new ToolplanePlugin({ manifest, tools: createTools() })],
    }).catch((e: unknown) => e);
    expect(SearchAttributesMissing.is(own)).toBe(true);
    expect((own as Error).message).toContain(command(namespace));
  });

  it('a client refuses to start a run, and starts nothing; once registered, the run completes', async () => {
    const workflowId = `sa-${randomUUID()}`;
    const input = {
      principal: 'agent:test',
      calls: [{ toolId: 'tool://crm/lookup_customer', args: { email: 'bob@example.com' } }],
    };
    const err = await startToolRun(client, input, { taskQueue: h.taskQueue, workflowId }).catch((e: unknown) => e);
    expect(SearchAttributesMissing.is(err)).toBe(true);
    expect((err as SearchAttributesMissing).data!.command).toBe(command(namespace));
    await expect(client.workflow.getHandle(workflowId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);

    // What the command does, through the API.
    await client.connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(SEARCH_ATTRIBUTES.map((a) => [a.name, indexedValueType(a.cliType)])),
    });
    const handle = await waitFor('the registered attributes to be accepted', 60_000, () =>
      startToolRun(client, input, { taskQueue: h.taskQueue, workflowId }),
    );
    const worker = await h.startWorker({ manifest, tools: createTools(), namespace });
    const result: ToolRunResult = await worker.runUntil(handle.result());
    expect(result.status).toBe('completed');
  });
});
