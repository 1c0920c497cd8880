// Committed histories of representative runs (history format v1) replay with the current workflow
// code. A change that alters their commands fails here: guard it with patched() (docs/versioning.md)
// and record the new path beside them; never re-record these to make a change pass.
import { workflowSpanSinks } from '../activities/telemetry';
import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { Patch } from '../common/names';
import { STREAM_PUBLISH_SIGNAL } from '../common/stream-protocol';
import type { AuthorizeResult } from '../common/wire';
import { effectsFromHistory, journalFromCompletion } from '../inspect/journal';
import type { AgentRunInput, AgentRunResult } from '../workflows/agent/run';
import { writeWorkflowBundle } from '../scripts/workflow-bundle';
import { testDir } from './support/env';

const dir = path.resolve(__dirname, 'histories');
const files = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort();
const load = (f: string) => historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')));

/** A team's own workflow beside toolplane's: the histories of such runs replay with that worker's bundle. */
const OWN_WORKFLOWS = path.resolve(__dirname, 'fixtures', 'own-workflows', 'recorded.ts');
const ownTypes = new Set(['ownConcurrent']);
let ownBundle: string;

beforeAll(async () => {
  ownBundle = path.join(testDir('replay-own'), 'bundle.js');
  await writeWorkflowBundle(ownBundle, OWN_WORKFLOWS, { sources: false });
});

/** The bundle of the worker that wrote the history. */
function bundleOf(f: string): string {
  const type = load(f).events![0]!.workflowExecutionStartedEventAttributes!.workflowType!.name!;
  return ownTypes.has(type) ? ownBundle : process.env.TOOLPLANE_TEST_BUNDLE!;
}

describe('replaying committed histories', () => {
  it('covers plain, retried, reconciled, escalated, refused and budgeted runs, and a budget workflow', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'plain.json',
        'retried.json',
        'reconciled.json',
        'escalated.json',
        'refused.json',
        'agent-refund.json',
        'agent-injected-ticket.json',
        'agent-approval.json',
        'agent-approved.json',
        'long-run-first.json',
        'long-run-continued.json',
        'budgeted.json',
        'budget-counter.json',
        // Calls that finish at once beside calls that settle a budget, in one task: agentRun's lanes, a workflow's own Promise.all.
        'agent-concurrent-budgeted.json',
        'own-concurrent-budgeted.json',
        // An MCP session's keyless repeat of a refund: sent again before patch toolplane-keyless-repeat-answered, answered after.
        'mcp-keyless-repeat-before.json',
        'mcp-keyless-repeat.json',
        // A model's answer streamed by the publish signal, which runs no longer take (issue 51: signed token batches by update).
        'agent-streamed.json',
      ]),
    );
    // It holds what it stands for: token batches that came by signal, before they were signed.
    expect(JSON.stringify(load('agent-streamed.json'))).toContain(STREAM_PUBLISH_SIGNAL);
  });

  it.each(files)('%s replays without divergence and performs nothing', async (file) => {
    const history = load(file);
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: bundleOf(file) }, sinks: workflowSpanSinks() },
      history,
      file,
    );
  });

  it('fails when the workflow code no longer matches a history', async () => {
    const history = load('plain.json');
    // The same history replayed as if the run had been asked for different calls: the commands diverge.
    const started = history.events![0]!.workflowExecutionStartedEventAttributes!;
    const input = JSON.parse(Buffer.from(started.input!.payloads![0]!.data!).toString());
    input.calls.reverse();
    started.input!.payloads![0]!.data = Buffer.from(JSON.stringify(input));
    await expect(
      Worker.runReplayHistory(
        { workflowBundle: { codePath: process.env.TOOLPLANE_TEST_BUNDLE! }, sinks: workflowSpanSinks() },
        history,
        'diverged',
      ),
    ).rejects.toThrow(/[Nn]ondeterminism|DeterminismViolation/);
  });

  it('detects a governed decision that would come out differently on replay', async () => {
    const history = load('agent-injected-ticket.json');
    // The same run, had the worker answered with a refund that has no field rules and claims to be
    // read-only: the attacker's refund would now be scheduled, which the history says it was not.
    const marker = history.events!.find((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')!;
    const data = marker.markerRecordedEventAttributes!.details!.result!.payloads![0]!;
    const answer = JSON.parse(Buffer.from(data.data!).toString()) as AuthorizeResult;
    answer.tools = answer.tools.map((t) =>
      t.id === 'tool://payments/refund' ? { ...t, protected_fields: [], safety: 'read_only' as const } : t,
    );
    data.data = Buffer.from(JSON.stringify(answer));
    await expect(
      Worker.runReplayHistory(
        { workflowBundle: { codePath: process.env.TOOLPLANE_TEST_BUNDLE! }, sinks: workflowSpanSinks() },
        history,
        'governed-diverged',
      ),
    ).rejects.toThrow(/[Nn]ondeterminism|DeterminismViolation/);
  });

  it.each(['agent-concurrent-budgeted.json', 'own-concurrent-budgeted.json'])(
    '%s: one task settles a budget and upserts a tool new to the run; in the other order it does not replay',
    async (file) => {
      const history = load(file);
      const events = history.events!;
      const scheduled = (e: (typeof events)[number]) => e.activityTaskScheduledEventAttributes?.activityType?.name;
      const upsertsTools = (e: (typeof events)[number] | undefined) =>
        !!e?.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.ToolplaneToolsCalled;
      // The two commands of one task: a settle beside an upsert, in either order.
      const i = events.findIndex(
        (e, k) =>
          (scheduled(e) === 'settleBudget' && upsertsTools(events[k + 1])) ||
          (upsertsTools(e) && scheduled(events[k + 1]!) === 'settleBudget'),
      );
      expect(i).toBeGreaterThan(0);
      await Worker.runReplayHistory(
        { workflowBundle: { codePath: bundleOf(file) }, sinks: workflowSpanSinks() },
        history,
        file,
      );
      // The same task had the code issued them the other way round: the settle's events follow it.
      const [a, b] = [events[i]!, events[i + 1]!];
      const [idA, idB] = [a.eventId, b.eventId];
      events[i] = { ...b, eventId: idA };
      events[i + 1] = { ...a, eventId: idB };
      const moved = new Map([
        [String(idA), idB],
        [String(idB), idA],
      ]);
      for (const e of events)
        for (const attrs of [e.activityTaskStartedEventAttributes, e.activityTaskCompletedEventAttributes])
          if (attrs && moved.has(String(attrs.scheduledEventId)))
            attrs.scheduledEventId = moved.get(String(attrs.scheduledEventId));
      await expect(
        Worker.runReplayHistory(
          { workflowBundle: { codePath: bundleOf(file) }, sinks: workflowSpanSinks() },
          history,
          `${file}-swapped`,
        ),
      ).rejects.toThrow(/[Nn]ondeterminism|DeterminismViolation/);
    },
  );

  it('records governed decisions in history: the refusals the model was told', () => {
    const events = load('agent-injected-ticket.json').events!;
    const journal = journalFromCompletion(events)!;
    expect(journal.filter((e) => e.decision === 'refused').map((e) => e.rule)).toEqual([
      'protected_field:/account_id',
      'protected_field:/to',
    ]);
    // Each turn sends what the model has not read yet (the rest is the worker's transcript).
    const told = events
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'modelTurn')
      .flatMap(
        (e) =>
          JSON.parse(Buffer.from(e.activityTaskScheduledEventAttributes!.input!.payloads![0]!.data!).toString())
            .messages as { role: string; content: string }[],
      )
      .filter((m) => m.role === 'tool' && m.content.includes('"Refused"'));
    expect(told.map((m) => JSON.parse(m.content).rule)).toEqual(['protected_field:/account_id', 'protected_field:/to']);
    const approval = journalFromCompletion(load('agent-approval.json').events!)!;
    expect(approval[1]).toMatchObject({ decision: 'denied', rule: 'protected_field:/to' });
  });

  it('history format v1: no patch markers but of patches added since; a run asks the worker first, in a local activity', () => {
    const current = new Set<string>(Object.values(Patch));
    for (const f of files) {
      const events = load(f).events!;
      const markers = events.flatMap((e) => e.markerRecordedEventAttributes?.markerName ?? []);
      // A patch's new path is recorded beside the old (docs/versioning.md); its marker names a current patch id.
      const patches = events.flatMap((e) => {
        const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
        return data ? [(JSON.parse(Buffer.from(data).toString()) as { id: string }).id] : [];
      });
      expect({ f, unknown: patches.filter((id) => !current.has(id)) }).toEqual({ f, unknown: [] });
      const others = markers.filter((m) => m !== 'core_local_activity' && m !== 'core_patch');
      expect({ f, markers: others }).toEqual({ f, markers: [] });
      const started = events[0]!.workflowExecutionStartedEventAttributes!;
      // A run asks the worker first; the budget workflow is no run and asks nobody.
      if (!started.continuedExecutionRunId && started.workflowType?.name !== 'budgetCounter')
        expect({ f, first: markers[0] }).toEqual({ f, first: 'core_local_activity' });
      expect(events.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'authorizeRun')).toBe(
        false,
      );
    }
  });

  it('keeps a refused answer in history, and only the decision the run took counts', () => {
    const events = load('agent-approved.json').events!;
    const outcomes = events.flatMap((e) => e.workflowExecutionUpdateCompletedEventAttributes?.outcome ?? []);
    expect(outcomes.map((o) => (o.success ? 'taken' : o.failure?.applicationFailureInfo?.type))).toEqual([
      'DecisionRejected',
      'taken',
    ]);
    const mail = effectsFromHistory(events, journalFromCompletion(events)).find(
      (v) => v.toolId === 'tool://mail/send_email',
    );
    expect(mail).toMatchObject({ decision: 'approved', personDecisions: ['approve by supervisor'], outcome: 'ok' });
  });

  it('replays a run that continued as new, from either side of the hand-over', () => {
    const first = load('long-run-first.json').events!;
    const continued = load('long-run-continued.json').events!;
    expect(first.at(-1)!.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
    const started = continued[0]!.workflowExecutionStartedEventAttributes!;
    expect(started.continuedExecutionRunId).toBeTruthy();
    const input = JSON.parse(Buffer.from(started.input!.payloads![0]!.data!).toString()) as AgentRunInput;
    expect(input.carry).toMatchObject({ v: 1, transcript: expect.stringMatching(/^sha256:/) });
    expect(input.model).not.toHaveProperty('script');
    // The hand-over holds the run's part of the journal; the chain's result sums every run's.
    expect(journalFromCompletion(first)!.length).toBeGreaterThan(0);
    const done = continued.at(-1)!.workflowExecutionCompletedEventAttributes!;
    const result = JSON.parse(Buffer.from(done.result!.payloads![0]!.data!).toString()) as AgentRunResult;
    expect(result.summary).toMatchObject({ calls: 6, refused: 2, allowed: 4 });
    expect(result.summary!.runs).toBeGreaterThan(2);
  });

  it('yields the journal view each history implies', () => {
    const views = Object.fromEntries(
      files.map((f) => {
        const events = load(f).events!;
        return [f, effectsFromHistory(events, journalFromCompletion(events))];
      }),
    );
    expect(views['reconciled.json']!.map((v) => [v.recovery, v.attempts, v.reconciles.map((r) => r.answer)])).toEqual([
      ['reconciled_landed', 1, ['landed']],
      ['reconciled_resent', 2, ['not_landed']],
      ['retried', 2, []],
    ]);
    expect(views['escalated.json']![0]).toMatchObject({
      recovery: 'escalated_retry',
      personDecisions: ['retry by oncall'],
      attempts: 2,
      outcome: 'ok',
    });
    expect(views['refused.json']!.map((v) => [v.decision, v.rule, v.attempts])).toEqual([
      ['refused', 'unreachable', 0],
      ['refused', 'unreachable', 0],
      ['refused', 'schema', 0],
      ['allowed', undefined, 1],
    ]);
    // One send, which Temporal retried once under the same activity: the journal's count, and the history's.
    expect(views['retried.json']![0]).toMatchObject({ attempts: 1, retries: 1, outcome: 'ok' });
    // Patch.SendsCounted: each try is a send of its own; the tool's failures are counted, up to its attempts.
    expect(views['retried-sends-counted.json']!.map((v) => [v.attempts, v.retries, v.toolFailures, v.outcome])).toEqual(
      [
        [2, 0, 1, 'ok'],
        [3, 0, 3, 'failed'],
      ],
    );
    for (const f of files) {
      const events = load(f).events!;
      const journal = journalFromCompletion(events) ?? [];
      const byKey = new Map(views[f]!.map((v) => [v.effectKey, v.attempts]));
      for (const j of journal) expect([f, j.position, byKey.get(j.effectKey)]).toEqual([f, j.position, j.attempts]);
    }
    expect(views['in-doubt-failed.json']![0]).toMatchObject({ recovery: 'in_doubt_failed', outcome: 'in_doubt' });
  });
});
