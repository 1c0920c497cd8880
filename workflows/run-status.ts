// Workflow-safe: what an operator sees of a run without opening it: the ToolplaneRefusals,
// ToolplaneWaitingFor and ToolplaneToolsCalled search attributes (upserted only when they change)
// and the run's current details in the Web UI (effects allowed, refused by rule, waiting for whom,
// until when, and how to answer from the Web UI).
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { shellWord } from '../common/shell-word';
import { REFUSALS, TOOLS_CALLED, WAITING_FOR, WaitingFor } from '../common/search-attributes';
import { DECISIONS, type EscalationDecision, type PendingEscalation } from './escalation';
import { ARGS_CHARS, bounded, inlineCode, readableTime, spacedJson } from './details-text';
import { CallTally } from './call-tally';

export { readableTime, REASON_CHARS, ARGS_CHARS } from './details-text';
export { REFUSALS_NAMED, CallTally, type RefusedCall } from './call-tally';

export interface RunStatus {
  refusals: number;
  waitingFor: WaitingFor;
}

function waitingFor(pending: readonly PendingEscalation[]): WaitingFor {
  if (pending.some((p) => p.kind === 'approval')) return WaitingFor.Approval;
  if (pending.some((p) => p.kind === 'in_doubt')) return WaitingFor.Escalation;
  return pending.length > 0 ? WaitingFor.Confirmation : WaitingFor.None;
}

/** Who answers from the Web UI: the name a decision pasted from Current Details records. */
export const WEB_UI_DECIDER = 'web-ui';

/**
 * The exact input of the `resolveEscalation` update that answers a waiting call: what an operator
 * pastes into the Web UI's "Send an Update" form (approve, or abort an in-doubt call). Indented as
 * the form's editor indents JSON when it loses focus: pasted on one line, the editor re-indents it as
 * the pointer goes down on Submit, the dialog grows, Submit moves from under the pointer and the
 * click is lost (no request, no message); pasted as the editor would write it, nothing moves.
 */
export function updatePayload(
  p: PendingEscalation,
  decision?: EscalationDecision['decision'],
  credentialed = false,
): string {
  const d = decision ?? FIRST_ANSWER[p.kind];
  if (!DECISIONS[p.kind].includes(d)) throw new Error(`"${d}" does not answer a ${p.kind} question`);
  // A worker that verifies who decides takes the approver's own token, and records its subject, instead of a name.
  const who = credentialed ? { credential: APPROVER_TOKEN } : { by: WEB_UI_DECIDER };
  const value = d === 'confirm' && p.field ? { value: p.field.value } : {};
  return JSON.stringify({ effectKey: p.effectKey, decision: d, ...value, ...who }, null, 2);
}

/** The answer a payload is written with when none is given. */
const FIRST_ANSWER: Readonly<Record<PendingEscalation['kind'], EscalationDecision['decision']>> = {
  approval: 'approve',
  in_doubt: 'abort',
  confirmation: 'confirm',
};

/** Whom a waiting call waits for, as Current Details say it. */
export const WAITING_ON: Readonly<Record<PendingEscalation['kind'], string>> = {
  approval: 'approval',
  in_doubt: 'a person (in doubt)',
  confirmation: "the principal's confirmation",
};

/** Where the Web UI's payload asks for the approver's own credential. */
export const APPROVER_TOKEN = '<your JWT>';

/** An error and its causes, as one line: `Activity task failed: the model refused the key`. */
export function failureMessage(err: unknown): string {
  const messages: string[] = [];
  for (let e: unknown = err; e !== undefined && e !== null && messages.length < 5;) {
    const message = e instanceof Error ? e.message : String(e);
    if (message && !messages.includes(message)) messages.push(message);
    e = e instanceof Error ? e.cause : undefined;
  }
  return messages.join(': ') || 'unknown error';
}

/** How a run ended without completing, for its last Current Details. */
export type RunEnd = { how: 'cancelled' } | { how: 'failed'; message: string };

/** What Current Details say beyond the tally and what waits now. */
export interface DetailsExtras {
  /** What the run is about, first (`StepCtx.summarise`). */
  headline?: string;
  /** Waits for a person that a cancellation cut short: nobody decided those calls. */
  cutShort?: readonly PendingEscalation[];
  end?: RunEnd;
  /** The worker verifies who decides: an answer carries the approver's credential, not a name. */
  credentialed?: boolean;
  /** The run's workflow id, for the CLI command that answers a waiting call. */
  workflowId?: string;
}

/** The CLI command that answers a waiting call, with the approver's credential where the worker verifies it. */
export function answerCommand(workflowId: string, p: PendingEscalation, credentialed = false): string {
  const [wf, key] = [shellWord(workflowId), shellWord(p.effectKey)];
  const command =
    p.kind === 'approval'
      ? `npx toolplane approve ${wf} ${key}`
      : p.kind === 'confirmation'
        ? `npx toolplane confirm ${wf} ${key} ${shellWord(String(p.field?.value ?? ''))}`
        : `npx toolplane resolve ${wf} ${key} abort`;
  return credentialed ? `${command} --credential "$TOOLPLANE_CREDENTIAL"` : command;
}

function waitingLines(p: PendingEscalation, credentialed = false, workflowId?: string): string[] {
  const who = credentialed
    ? `replace \`${APPROVER_TOKEN}\` with your own token, from an issuer the worker trusts, as a declared approver`
    : '`"by"` names who decided';
  const how =
    p.kind === 'approval'
      ? 'To approve it in the Web UI: **More Actions → Send an Update**, name `resolveEscalation`, with this ' +
        `data (\`"deny"\` for \`"approve"\` refuses it; ${who}):`
      : p.kind === 'confirmation'
        ? 'Only the principal the run acts for answers. To confirm the value in the Web UI: **More Actions → Send an Update**, ' +
          `name \`resolveEscalation\`, with this data (\`"reject"\` for \`"confirm"\` refuses the call${credentialed ? '; replace `<your JWT>` with your own token' : ''}):`
        : 'To decide it in the Web UI: **More Actions → Send an Update**, name `resolveEscalation`, with this data ' +
          `(\`"abort"\` fails the call; \`"retry"\` sends it again; \`"landed"\` takes the provider's \`"output"\`${credentialed ? `; ${who}` : ''}):`;
  return [
    `**Waiting for ${WAITING_ON[p.kind]}** until ${readableTime(p.deadline)}: ` +
      `#${p.position} ${p.toolId}: ${p.reason}`,
    // What an approval lets out: the arguments as the call sends them (after any declared redaction).
    ...(p.args !== undefined ? [`Sends: ${inlineCode(bounded(spacedJson(p.args), ARGS_CHARS))}`] : []),
    `Effect key: \`${p.effectKey}\``,
    how,
    // A block of its own, so that selecting it selects exactly the payload, with the lines the Web UI's editor gives it.
    '```json\n' + updatePayload(p, undefined, credentialed) + '\n```',
    ...(workflowId !== undefined
      ? [
          `Or from a shell${credentialed ? ' (your token in `$TOOLPLANE_CREDENTIAL`)' : ''}: ` +
            inlineCode(answerCommand(workflowId, p, credentialed)),
        ]
      : []),
  ];
}

/** Markdown for the Web UI's Current Details: how the run ended, what waits and how to answer, refusals, then the effects so far. */
export function detailsOf(tally: CallTally, pending: readonly PendingEscalation[], extras: DetailsExtras = {}): string {
  const lines: string[] = [];
  const cutShort = extras.cutShort ?? [];
  if (extras.headline) lines.push(extras.headline);
  if (extras.end?.how === 'cancelled') lines.push('**Cancelled**: the run waits for nobody.');
  else if (extras.end?.how === 'failed') lines.push(`**Failed**: ${extras.end.message}`);
  for (const p of pending) lines.push(...waitingLines(p, extras.credentialed, extras.workflowId));
  for (const p of cutShort)
    lines.push(
      `**Wait cancelled**: #${p.position} ${p.toolId} (effect \`${p.effectKey}\`) waited for ` +
        `${WAITING_ON[p.kind]}; nobody decided it.`,
    );
  if (tally.refused.length > 0) {
    const earlier = tally.refusals - tally.refused.length;
    lines.push(
      `**Refused**: ${tally.refused.map((r) => `#${r.position} ${r.toolId} (${r.rule}${r.reason ? `: ${r.reason}` : ''})`).join(', ')}` +
        (earlier > 0 ? `, and ${earlier} earlier` : ''),
    );
  }
  if (tally.accepted.length > 0) {
    const earlier = tally.acceptedUntrusted - tally.accepted.length;
    lines.push(
      `**Trust rules waived** at the workflow's request (the manifest allows it for these tools): ` +
        tally.accepted.map((a) => `#${a.position} ${a.toolId} (${a.reason})`).join(', ') +
        (earlier > 0 ? `, and ${earlier} earlier` : ''),
    );
  }
  if (tally.calls > 0) {
    // A call not yet settled counts as allowed (its provisional decision), unless it waits for a
    // person or its wait was cut short.
    const allowed = tally.calls - tally.approved - tally.refusals - pending.length - cutShort.length;
    const parts = [
      ...(allowed > 0 ? [`${allowed} allowed`] : []),
      ...(tally.approved ? [`${tally.approved} approved`] : []),
      ...[...tally.byRule].map(([r, n]) => `${n} ${r}`),
      ...(cutShort.length ? [`${cutShort.length} undecided (cancelled)`] : []),
    ];
    lines.push(
      `**Effects**: ${tally.calls} calls: ${parts.join(', ')}${pending.length ? `, ${pending.length} waiting` : ''}`,
    );
  }
  return lines.join('\n\n');
}

/**
 * Publishes a run's status, upserting the search attributes only when they change from what the
 * run started with (no refusals, waiting for nobody: what the client sets at start and a chain
 * carries), so a run with nothing to report spends no events on it.
 */
export class RunStatusBoard {
  private last?: RunStatus;
  /** Refusals of the runs this one continues: a chain counts as one run. */
  carriedRefusals = 0;
  readonly tally = new CallTally();
  private readonly cutShort: PendingEscalation[] = [];
  private end?: RunEnd;
  /** The line Current Details start with (`StepCtx.summarise`). */
  headline?: string;
  /** The worker verifies who decides (`authorizeDecision`): the Web UI payload asks for a credential. */
  credentialed = false;
  /** The tools ToolplaneToolsCalled lists, as this run last read or upserted it. */
  private called?: Set<string>;

  /** Refusals over the whole chain. */
  refusals(): number {
    return this.carriedRefusals + this.tally.refusals;
  }

  /**
   * A call of this tool returned: ToolplaneToolsCalled lists it from now on. Upserted when a tool is
   * new to the attribute (which a chain carries), so a running, cancelled or failed run shows it too.
   */
  toolCalled(toolId: string): void {
    // What the attribute lists, read once (a chain carries it) and kept as it is upserted: a tool
    // already listed costs a set lookup, not a read of the search attributes and a scan of the list.
    if (this.called?.has(toolId)) return;
    const called = workflowInfo().typedSearchAttributes.get(TOOLS_CALLED) ?? [];
    this.called = new Set(called);
    if (this.called.has(toolId)) return;
    upsertSearchAttributes([{ key: TOOLS_CALLED, value: [...called, toolId] }]);
    this.called.add(toolId);
  }

  /** A cancellation cut a wait for a person short: the run no longer waits for it, and says so. */
  waitCutShort(p: PendingEscalation): void {
    this.cutShort.push(p);
  }

  /** The run ends without completing; publish() then tells how, and that it waits for nobody. */
  ended(end: RunEnd): void {
    this.end = end;
  }

  publish(pending: readonly PendingEscalation[]): void {
    if (this.end) pending = [];
    setCurrentDetails(
      detailsOf(this.tally, pending, {
        headline: this.headline,
        cutShort: this.cutShort,
        end: this.end,
        credentialed: this.credentialed,
        workflowId: workflowInfo().workflowId,
      }),
    );
    const last = (this.last ??= { refusals: this.carriedRefusals, waitingFor: WaitingFor.None });
    const now: RunStatus = { refusals: this.refusals(), waitingFor: waitingFor(pending) };
    if (now.refusals === last.refusals && now.waitingFor === last.waitingFor) return;
    upsertSearchAttributes([
      { key: REFUSALS, value: now.refusals },
      { key: WAITING_FOR, value: now.waitingFor },
    ]);
    this.last = now;
  }
}
