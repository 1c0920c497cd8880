// A run credential starts one run, whichever worker is asked: spent in Temporal, not in a worker's
// memory. Two real worker processes serve the queue, then both are SIGKILLed and a third started;
// a credential read from a closed run's history is refused each time, and nothing lands.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { paymentsStore } from '../../examples/support-desk/payments-store';
import { writeManifest, type WorkerProcess } from '../../scripts/worker-process';
import { spawnTestWorker } from '../support/worker-process';
import { agentInput, type Script } from '../support/agent';
import { refundScript } from '../support/desk';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { historyOf, scheduledActivities } from '../support/history';
import { testIssuer, type TestIssuer } from '../support/identity';

const ATTACKER = 'acct_attacker_991';
const attackerScript: Script = {
  prompt: 'Refund the customer.',
  turns: [
    {
      tool_calls: [
        { name: 'payments__refund', arguments: { account_id: ATTACKER, amount_cents: 95000, currency: 'EUR' } },
      ],
    },
    { final: 'done' },
  ],
};

describe('a run credential acts once across worker processes', () => {
  const dir = testDir('credential-replay');
  const manifest = {
    ...exampleManifest(),
    principals: { 'agent:desk': { tools: '*' as const, capabilities: [], models: '*' as const, share_facts_with: [] } },
  };
  const taskQueue = `credential-replay-${randomUUID()}`;
  const workers: WorkerProcess[] = [];
  let h: Harness;
  let issuer: TestIssuer;
  let identityFile: string;
  let manifestFile: string;

  const serve = () => {
    const w = spawnTestWorker({
      manifestFile,
      taskQueue,
      storeDir: dir,
      args: ['--identity', identityFile],
    });
    workers.push(w);
    return w;
  };

  beforeAll(async () => {
    h = await harness(taskQueue);
    issuer = await testIssuer();
    identityFile = path.join(dir, 'identity.json');
    fs.writeFileSync(identityFile, JSON.stringify(issuer.identity));
    manifestFile = writeManifest(dir, manifest);
  });
  afterAll(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    await h?.close();
  });

  it('refused on either of two workers, and on a worker started after both were killed', async () => {
    serve();
    serve();
    const workflowId = `agent-${randomUUID()}`;
    const credential = await issuer.runCredential('agent:desk', workflowId);
    const genuine = await h.client.workflow.start('agentRun', {
      taskQueue,
      workflowId,
      args: [agentInput(manifest, refundScript, { principal: 'agent:desk', credential })],
    });
    await genuine.result();
    const payments = paymentsStore(dir);
    const before = payments.all().length;
    expect(before).toBe(1);

    const attack = async () => {
      const replayed = await h.client.workflow.start('agentRun', {
        taskQueue,
        workflowId,
        args: [agentInput(manifest, attackerScript, { principal: 'agent:desk', credential })],
      });
      await expect(replayed.result()).rejects.toMatchObject({
        cause: { type: 'IdentityRefused', message: expect.stringContaining('already used') },
      });
      expect(scheduledActivities(await historyOf(h.client, workflowId))).toEqual([]);
    };
    // Whichever of the two workers takes each attempt (three, so both are likely asked), the token is spent.
    for (let i = 0; i < 3; i++) await attack();

    for (const w of workers.splice(0)) {
      w.child.kill('SIGKILL');
      await w.exited;
    }
    serve();
    await attack();
    expect(payments.all().length).toBe(before);
    expect(payments.all().filter((p) => p.account === ATTACKER)).toEqual([]);
  });
});
