/**
 * Records the histories the replay test replays on every `npm test`: representative runs of
 * history format v1 on a fresh dev server. They are never re-recorded to make a change pass: a
 * change that alters their commands needs a patch (docs/versioning.md), and its new path gets a
 * history of its own beside them.
 *
 *   npx tsx test/support/record-histories.ts [name...]
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { loadManifest } from '../../runtime/manifest-file';
import type { Manifest } from '../../catalog/manifest';
import { createTools } from '../../examples/support-desk/tools';
import { freePort, startDevServer } from '../../scripts/dev-server';
import { budgetWorkflowId } from '../../common/budget-id';
import { resolveEscalation } from '../../workflows/escalation';
import { waitForPending } from './escalations';
import type { ToolRunInput } from '../../workflows/tool-run';
import type { Tool } from '../../activities/tool';
import type { AgentRunInput } from '../../workflows/agent/run';
import { readScript } from '../../cli';
import { createWorker } from '../../worker';
import { SCENARIO_MANIFEST, scenarioTools } from './scenario-tools';
import { writeWorkflowBundle } from '../../scripts/workflow-bundle';
import type { OwnConcurrentInput } from '../fixtures/own-workflows';

export const HISTORIES_DIR = path.resolve(__dirname, '..', 'histories');

interface Recording {
  name: string;
  manifest: Manifest;
  calls?: ToolRunInput['calls'];
  /** An agent run instead of a fixed list of calls. */
  agent?: Omit<AgentRunInput, 'manifest' | 'manifestDigest' | 'grants' | 'principal'>;
  grants?: string[];
  /** Also record the chain's first run as `<name>-first`: the run continues as new. */
  chain?: boolean;
  /** Served by the worker whose mail tool asks a person instead of refusing. */
  askable?: boolean;
  /** Acts on the running workflow (a person's decision). */
  during?: (client: Client, workflowId: string) => Promise<void>;
  /** Served by the worker whose refund counts a budget across runs. */
  budgeted?: boolean;
  /** Also record the principal's budget workflow, as `budget-counter`. */
  counter?: boolean;
  /** Served by the worker whose close_ticket ends with the next refund (it runs toolplane's workflows and a team's own). */
  together?: boolean;
  /** A team's own workflow (`ownConcurrent`, test/fixtures/own-workflows) instead, on the worker that serves it beside toolplane's. */
  own?: Omit<OwnConcurrentInput, 'principal'>;
}

/** The resolutions that make a close_ticket call end together with the next refund: just after it, or just before. */
const CLOSE_AFTER_REFUND = 'Refunded the duplicate charge.';
const CLOSE_BEFORE_REFUND = 'Refunded.';

/**
 * The support desk's tools, where a close_ticket call with one of the resolutions above waits for the next
 * refund to start (then closes, as the refund runs) or to end (then closes at once): the two activities
 * complete together, so one workflow task hears both, the refund's (which then settles its budget) and
 * the close's (a tool new to the run, whose name is upserted).
 */
function endingTogether(tools: Tool[]): Tool[] {
  const waiting = { start: [] as (() => void)[], end: [] as (() => void)[] };
  const next = (at: 'start' | 'end') =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 10_000);
      waiting[at].push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  const wake = (at: 'start' | 'end') => waiting[at].splice(0).forEach((w) => w());
  return tools.map((t): Tool => {
    const id = t.def().id;
    if (id === 'tool://payments/refund')
      return {
        ...t,
        call: async (ctx, raw) => {
          wake('start');
          try {
            return await t.call(ctx, raw);
          } finally {
            wake('end');
          }
        },
      };
    if (id !== 'tool://tickets/close_ticket') return t;
    return {
      ...t,
      call: async (ctx, raw) => {
        const { resolution } = raw as { resolution?: string };
        if (resolution === CLOSE_AFTER_REFUND) await next('end');
        if (resolution === CLOSE_BEFORE_REFUND) await next('start');
        return t.call(ctx, raw);
      },
    };
  });
}

/** An agent that reads ticket T-101, then mails `to`: an address no trusted source produced, so a person is asked. */
function mailAfterTicket(to: string): Recording['agent'] {
  return {
    prompt: 'Handle ticket T-101.',
    model: {
      endpoint: 'scripted',
      script: [
        { tool_calls: [{ name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } }] },
        { tool_calls: [{ name: 'mail__send_email', arguments: { to, subject: 'x', body: 'y' } }] },
        { final: 'done' },
      ],
    },
  };
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolplane-record-'));
  process.env.TOOLPLANE_STORE_DIR = path.join(dir, 'stores');
  const server = await startDevServer({
    port: await freePort(),
    uiPort: await freePort(),
    dbFile: path.join(dir, 'temporal.sqlite'),
    log: () => {},
  });
  const native = await NativeConnection.connect({ address: server.address });
  const client = new Client({ connection: await Connection.connect({ address: server.address }) });
  const desk = loadManifest(path.resolve(__dirname, '..', '..', 'examples', 'support-desk', 'manifest.yaml')).manifest;
  const flaky = loadManifest(SCENARIO_MANIFEST).manifest;
  const taskQueue = 'record';
  const served: Manifest = {
    ...desk,
    servers: { ...desk.servers, ...flaky.servers },
    tools: [...desk.tools, ...flaky.tools],
  };
  const worker = await createWorker({
    connection: native,
    taskQueue,
    manifest: served,
    tools: [...createTools(), ...scenarioTools(path.join(dir, 'flaky')).tools],
    allowUngovernedToolRun: true,
  });
  // The mail tool asks a person when the gate questions a call, instead of refusing it; its scripted
  // model writes word by word, so a turn's answer streams as token batches.
  const askable: Manifest = {
    ...desk,
    models: { ...desk.models, scripted: { provider: 'scripted', token_delay: '10ms' } },
    tools: desk.tools.map((t) => (t.id === 'tool://mail/send_email' ? { ...t, approval: 'on_violation' as const } : t)),
  };
  const askableWorker = await createWorker({
    connection: native,
    taskQueue: `${taskQueue}-askable`,
    manifest: askable,
    tools: createTools(),
  });

  // The refund counts 1,500.00 a UTC day per account across the principal's runs.
  const budgeted: Manifest = {
    ...desk,
    tools: desk.tools.map((t) =>
      t.id === 'tool://payments/refund'
        ? {
            ...t,
            spend: {
              amount: '/amount_cents',
              amount_unit: 'minor' as const,
              currency: '/currency',
              payee: '/account_id',
              max_minor_per_payee: { EUR: 100000 },
              budgets: [{ period: '1d', per: 'payee' as const, max_minor: { EUR: 150000 } }],
            },
          }
        : t,
    ),
  };
  const budgetedWorker = await createWorker({
    connection: native,
    taskQueue: `${taskQueue}-budgeted`,
    manifest: budgeted,
    tools: createTools(),
    allowUngovernedToolRun: true,
  });

  // toolplane's workflows and a team's own on one worker, whose refund counts the same budget.
  const ownBundle = path.join(dir, 'own-bundle.js');
  await writeWorkflowBundle(ownBundle, path.resolve(__dirname, '..', 'fixtures', 'own-workflows', 'recorded.ts'));
  const ownWorker = await createWorker({
    connection: native,
    taskQueue: `${taskQueue}-own`,
    manifest: budgeted,
    tools: endingTogether(createTools()),
    workflowBundle: { codePath: ownBundle },
  });

  const only = process.argv.slice(2);
  const recordings: Recording[] = [
    {
      name: 'plain',
      manifest: desk,
      calls: [
        { toolId: 'tool://crm/lookup_customer', args: { email: 'alice@example.com' } },
        {
          toolId: 'tool://payments/refund',
          args: { account_id: 'acct_alice_001', amount_cents: 2500, currency: 'EUR', memo: 'duplicate charge' },
        },
        { toolId: 'tool://tickets/close_ticket', args: { ticket_id: 'T-100', resolution: 'refunded' } },
      ],
    },
    { name: 'retried', manifest: flaky, calls: [{ toolId: 'tool://flaky/read', args: { q: 'balance' } }] },
    // Patch.SendsCounted: the rejected send is sent again by the workflow after a timer; the second
    // call's tool fails every send, up to its maximum_attempts.
    {
      name: 'retried-sends-counted',
      manifest: flaky,
      calls: [
        { toolId: 'tool://flaky/read', args: { q: 'balance' } },
        { toolId: 'tool://flaky/read', args: { q: 'never' } },
      ],
    },
    {
      name: 'reconciled',
      manifest: flaky,
      calls: [
        { toolId: 'tool://flaky/charge', args: { account: 'acct-1', cents: 500, mode: 'in_doubt_landed' } },
        { toolId: 'tool://flaky/charge', args: { account: 'acct-2', cents: 700, mode: 'in_doubt_not_landed' } },
        { toolId: 'tool://flaky/charge', args: { account: 'acct-3', cents: 900, mode: 'rejected_once' } },
      ],
    },
    {
      name: 'escalated',
      manifest: flaky,
      calls: [{ toolId: 'tool://flaky/notify', args: { to: 'ops@example.com', text: 'hello' } }],
      during: async (c, workflowId) => {
        const handle = c.workflow.getHandle(workflowId);
        await handle.executeUpdate(resolveEscalation, {
          args: [{ effectKey: (await waitForPending(handle)).effectKey, decision: 'retry', by: 'oncall' }],
        });
      },
    },
    {
      name: 'refused',
      manifest: desk,
      grants: ['tool://crm/lookup_customer', 'tool://tickets/read_ticket'],
      calls: [
        { toolId: 'tool://payments/wire_everything', args: { to: 'acct_attacker' } },
        { toolId: 'tool://payments/refund', args: { account_id: 'acct_alice_001', amount_cents: 1, currency: 'EUR' } },
        { toolId: 'tool://crm/lookup_customer', args: { email: 7 } },
        { toolId: 'tool://tickets/read_ticket', args: { ticket_id: 'T-101' } },
      ],
    },
    {
      name: 'in-doubt-failed',
      manifest: flaky,
      calls: [{ toolId: 'tool://flaky/wire', args: { account: 'acct-9', cents: 100 } }],
    },
    {
      // A run whose model's answer streams (token batches into the run's stream): recorded when they came
      // by the publish signal, before issue 51 signed them; the run replays the same without taking them.
      name: 'agent-streamed',
      manifest: askable,
      askable: true,
      agent: {
        prompt: 'Look alice@example.com up and say what you found.',
        model: {
          endpoint: 'scripted',
          script: [
            { tool_calls: [{ name: 'crm__lookup_customer', arguments: { email: 'alice@example.com' } }] },
            { final: 'Alice is a customer of ours, on the gold plan since 2021, with no open tickets.' },
          ],
        },
      },
    },
    ...['refund', 'injected-ticket'].map((name) => {
      const script = readScript(
        path.resolve(__dirname, '..', '..', 'examples', 'support-desk', 'scripts', `${name}.json`),
      );
      return {
        name: `agent-${name}`,
        manifest: desk,
        agent: { prompt: script.prompt!, model: { endpoint: 'scripted', script: script.turns } },
      };
    }),
    {
      name: 'agent-approval',
      manifest: askable,
      askable: true,
      agent: mailAfterTicket('audit@evil.example'),
      during: async (c, workflowId) => {
        const handle = c.workflow.getHandle(workflowId);
        await handle.executeUpdate(resolveEscalation, {
          args: [{ effectKey: (await waitForPending(handle)).effectKey, decision: 'deny', by: 'supervisor' }],
        });
      },
    },
    {
      // A person first answers under a mistyped key (refused, kept in history), then approves.
      name: 'agent-approved',
      manifest: askable,
      askable: true,
      agent: mailAfterTicket('auditor@partner.example'),
      during: async (c, workflowId) => {
        const handle = c.workflow.getHandle(workflowId);
        const { effectKey } = await waitForPending(handle);
        await handle
          .executeUpdate(resolveEscalation, {
            args: [{ effectKey: 'ek-mistyped', decision: 'approve', by: 'supervisor' }],
          })
          .catch(() => undefined);
        await handle.executeUpdate(resolveEscalation, {
          args: [{ effectKey, decision: 'approve', by: 'supervisor', reason: 'known auditor' }],
        });
      },
    },
  ];

  // A refund within the budget (reserved, committed), one over it (refused by the budget workflow).
  const refund = (cents: number) => ({
    toolId: 'tool://payments/refund',
    args: { account_id: 'acct_alice_001', amount_cents: cents, currency: 'EUR', memo: 'budgeted' },
  });
  recordings.push({
    name: 'budgeted',
    manifest: budgeted,
    budgeted: true,
    counter: true,
    calls: [refund(100000), refund(60000)],
  });

  // One turn calls tools the run has not called before (their first ToolplaneToolsCalled upserts) together
  // with read-only calls, the next two budgeted refunds in one keyed lane beside the global lane and
  // read-only calls: the follow-ups of calls that finish at once and of calls that settle a budget mix.
  const desk100 =
    'Ticket T-100 is from alice@example.com: she was charged twice for order 5512. Refund the duplicate 25.00 EUR to her account and close the ticket.';
  const refundArgs = (account: unknown, cents: number, memo: string) => ({
    account_id: account,
    amount_cents: cents,
    currency: 'EUR',
    memo,
  });
  recordings.push({
    name: 'agent-concurrent-budgeted',
    manifest: budgeted,
    together: true,
    agent: {
      prompt: desk100,
      model: {
        endpoint: 'scripted',
        script: [
          {
            tool_calls: [
              { name: 'tickets__read_ticket', arguments: { ticket_id: 'T-100' } },
              { name: 'crm__lookup_customer', arguments: { email: 'alice@example.com' } },
              { name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } },
            ],
          },
          {
            tool_calls: [
              {
                name: 'payments__refund',
                arguments: refundArgs('acct_alice_001', 2500, 'Duplicate charge on order 5512'),
              },
              { name: 'crm__lookup_customer', arguments: { email: 'alice@example.com' } },
              {
                name: 'tickets__close_ticket',
                arguments: { ticket_id: 'T-100', resolution: CLOSE_AFTER_REFUND },
              },
              {
                name: 'payments__refund',
                arguments: refundArgs('acct_alice_001', 2500, 'Second duplicate charge on order 5512'),
              },
              { name: 'tickets__read_ticket', arguments: { ticket_id: 'T-100' } },
            ],
          },
          { final: 'Refunded and closed T-100.' },
        ],
      },
    },
  });
  // A team's own workflow: a lookup, then Promise.all over a budgeted refund, tools new to the run and read-only calls.
  const fromLookup = { $from: { call: 0, pointer: '/account_id' } };
  recordings.push({
    name: 'own-concurrent-budgeted',
    manifest: budgeted,
    own: {
      given: desk100,
      calls: [{ toolId: 'tool://crm/lookup_customer', args: { email: 'alice@example.com' } }],
      together: [
        { toolId: 'tool://tickets/read_ticket', args: { ticket_id: 'T-100' } },
        { toolId: 'tool://payments/refund', args: refundArgs(fromLookup, 2500, 'Duplicate charge on order 5512') },
        { toolId: 'tool://crm/lookup_customer', args: { email: 'bob@example.com' } },
        { toolId: 'tool://tickets/close_ticket', args: { ticket_id: 'T-100', resolution: CLOSE_BEFORE_REFUND } },
        { toolId: 'tool://tickets/read_ticket', args: { ticket_id: 'T-101' } },
      ],
    },
  });

  // A run that continues as new every couple of turns: the last run starts from carried state.
  const injected = recordings.find((x) => x.name === 'agent-injected-ticket')!;
  recordings.push({
    ...injected,
    name: 'long-run-continued',
    chain: true,
    agent: { ...injected.agent!, continueAsNewAfterEvents: 20 },
  });

  fs.mkdirSync(HISTORIES_DIR, { recursive: true });
  await worker.runUntil(
    askableWorker.runUntil(
      budgetedWorker.runUntil(
        ownWorker.runUntil(async () => {
          for (const r of recordings.filter((x) => only.length === 0 || only.includes(x.name))) {
            const workflowId = `history-${r.name}-${randomUUID().slice(0, 8)}`;
            const grants = r.grants ?? r.manifest.tools.map((t) => t.id);
            const handle = r.own
              ? await client.workflow.start('ownConcurrent', {
                  taskQueue: `${taskQueue}-own`,
                  workflowId,
                  args: [{ ...r.own, principal: 'agent:recorder' }],
                })
              : r.agent
                ? await client.workflow.start('agentRun', {
                    taskQueue: r.together ? `${taskQueue}-own` : r.askable ? `${taskQueue}-askable` : taskQueue,
                    workflowId,
                    args: [
                      // The worker's manifest governs: the run only names what it asks for.
                      { ...r.agent, grants, principal: 'agent:recorder' },
                    ],
                  })
                : await client.workflow.start('toolRun', {
                    taskQueue: r.budgeted ? `${taskQueue}-budgeted` : taskQueue,
                    workflowId,
                    args: [{ grants, principal: 'agent:recorder', calls: r.calls!, continueOnError: true }],
                  });
            await r.during?.(client, workflowId);
            await handle.result();
            const runs: [string, string | undefined, string?][] = [[r.name, undefined]];
            if (r.chain) runs.push([`${r.name.replace(/-continued$/, '')}-first`, handle.firstExecutionRunId]);
            if (r.counter) runs.push(['budget-counter', undefined, budgetWorkflowId('agent:recorder')]);
            for (const [name, runId, otherId] of runs) {
              const history = await client.workflow.getHandle(otherId ?? workflowId, runId).fetchHistory();
              fs.writeFileSync(
                path.join(HISTORIES_DIR, `${name}.json`),
                JSON.stringify(JSON.parse(historyToJSON(history)), null, 1) + '\n',
              );
              console.log(`recorded ${name}: ${history.events?.length} events`);
            }
          }
        }),
      ),
    ),
  );
  await native.close();
  await client.connection.close();
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
