// Which of the base branch's decisions a reset run takes over (workflows/base-branch.ts
// `carriedDecisionOf`): the very same call only, of the kind asked now, about the same value; an
// in-doubt `retry` never, since it answered the base's own send.
import type { BaseBranch, BaseDecision } from '../../common/base-branch';
import { carriedDecisionOf } from '../../workflows/base-branch';
import type { PendingEscalation } from '../../workflows/escalation';

const KEY = 'ek-refund';
const base = (decisions: BaseDecision[], key = KEY): BaseBranch => ({
  forRun: 'reset-run',
  completed: {},
  unknown: {},
  decisions: { [key]: decisions },
});
const taken = (decision: string, more: Partial<BaseDecision> = {}): BaseDecision => ({
  decision,
  by: 'supervisor',
  runId: 'base-run',
  eventId: 42,
  ...more,
});
const asked = (kind: PendingEscalation['kind'], more: Partial<PendingEscalation> = {}): PendingEscalation => ({
  effectKey: KEY,
  toolId: 'tool://payments/refund',
  position: 1,
  reason: 'asked',
  deadline: 0,
  kind,
  ...more,
});

describe('a decision carried across a reset', () => {
  it('an approval or a denial of the same call is carried, saying where it was given', () => {
    expect(carriedDecisionOf(base([taken('approve')]), asked('approval'))).toEqual({
      effectKey: KEY,
      decision: 'approve',
      by: 'supervisor',
      reason: 'given in run base-run (event 42) before the reset',
    });
    expect(carriedDecisionOf(base([taken('approve'), taken('deny')]), asked('approval'))?.decision).toBe('deny');
  });

  it('another call (another effect key: other arguments, tool or position) is asked again', () => {
    expect(carriedDecisionOf(base([taken('approve')], 'ek-other'), asked('approval'))).toBeUndefined();
  });

  it('a decision of another kind answers nothing here', () => {
    expect(carriedDecisionOf(base([taken('approve')]), asked('in_doubt'))).toBeUndefined();
    expect(carriedDecisionOf(base([taken('landed', { output: { ok: 1 } })]), asked('approval'))).toBeUndefined();
  });

  it('a confirmation is carried for the same value only', () => {
    const field = { pointer: '/to', value: 'bob@example.com', origin: 'written by the model' };
    const yes = base([taken('confirm', { value: 'bob@example.com' })]);
    expect(carriedDecisionOf(yes, asked('confirmation', { field }))).toMatchObject({ decision: 'confirm' });
    expect(
      carriedDecisionOf(yes, asked('confirmation', { field: { ...field, value: 'eve@example.com' } })),
    ).toBeUndefined();
  });

  it('an in-doubt retry is asked again; landed and abort are carried', () => {
    expect(carriedDecisionOf(base([taken('retry')]), asked('in_doubt'))).toBeUndefined();
    expect(carriedDecisionOf(base([taken('landed', { output: { id: 're_1' } })]), asked('in_doubt'))).toEqual({
      effectKey: KEY,
      decision: 'landed',
      output: { id: 're_1' },
      by: 'supervisor',
    });
    expect(carriedDecisionOf(base([taken('abort')]), asked('in_doubt'))?.decision).toBe('abort');
  });

  it('a base answer without decisions (an older worker) carries nothing', () => {
    expect(carriedDecisionOf({ forRun: 'r', completed: {}, unknown: {} }, asked('approval'))).toBeUndefined();
  });
});
