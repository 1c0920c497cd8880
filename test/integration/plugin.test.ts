// ToolplanePlugin on a worker the user creates: its activities and interceptor are never silently dropped.
import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { ToolplanePlugin } from '../../plugin';
import { exampleManifest, harness, type Harness } from '../support/env';
import { createTools } from '../../examples/support-desk/tools';

describe('ToolplanePlugin', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness(`plugin-${randomUUID()}`);
  });
  afterAll(() => h.close());

  const create = (activities: object) =>
    Worker.create({
      connection: h.native,
      taskQueue: h.taskQueue,
      workflowBundle: { codePath: process.env.TOOLPLANE_TEST_BUNDLE! },
      activities,
      plugins: [new ToolplanePlugin({ manifest: exampleManifest(), tools: createTools(), log: () => {} })],
    });

  it("refuses a worker whose own activities would replace toolplane's", async () => {
    await expect(create({ performTool: async () => 'mine' })).rejects.toMatchObject({
      code: 'ActivityConflict',
      message: expect.stringContaining('performTool'),
    });
  });

  it("adds toolplane's activities beside the worker's own", async () => {
    const worker = await create({ greet: async () => 'hello' });
    // The worker holds its activities by name once created.
    const names = [...(worker.options.activities as Map<string, unknown>).keys()];
    await worker.runUntil(Promise.resolve());
    expect(names).toEqual(
      expect.arrayContaining(['greet', 'authorizeRun', 'performTool', 'reconcileTool', 'modelTurn', 'resolveCarried']),
    );
  });

  it('refuses to construct when the tools disagree with the manifest', () => {
    expect(() => new ToolplanePlugin({ manifest: exampleManifest(), tools: [], log: () => {} })).toThrow(
      /disagree with the manifest/,
    );
  });
});
