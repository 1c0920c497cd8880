// Workflow-safe: one principal's budgets across runs, kept in Temporal itself. One long-lived
// workflow per principal (`toolplane-budget/<principal>`, see common/budget-id.ts) holds the spent
// and reserved amounts per UTC-aligned window, and the reservations by id. Its updates run one at a
// time and never await, so a check and its reservation are one step. It continues as new with its
// whole state (the dedupe records included), and ends once nothing is held or remembered.
//
// Who may change it (docs/budgets.md): the worker, whose messages prove themselves
// (common/budget-proof.ts), and an operator with a verified credential. A settle is checked in its
// validator (its proof opens the reservation's seal: a hash, nothing secret), so a forged one never
// enters history. A reserve's MAC needs the ticket key, which no workflow holds: its validator refuses
// what it can see is wrong (no MAC, stale, an id already recorded) before history, and its handler asks
// the worker beside it (a local activity) before it counts anything; a forged MAC fails that update,
// counting nothing. An operator's release is verified the same way, like an approver's decision.
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  patched,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import { windowName } from '../../catalog/budget';
import { RunFailureType } from '../../catalog/failure-types';
import { principalOfBudgetWorkflow } from '../../common/budget-id';
import { BUDGET_MESSAGE_REFUSED, BudgetRefusedReason, type BudgetSeals } from '../../common/budget-proof';
import {
  budgetWindowsQuery,
  releaseBudgetUpdate,
  reserveBudgetUpdate,
  settleBudgetUpdate,
  type BudgetCounterInput,
  type BudgetCounterWorkflow,
  type BudgetProofRequest,
  type BudgetState,
  type ReleaseUpdate,
} from '../../common/budget-protocol';
import { Patch } from '../../common/names';
import type { BudgetProofActivities } from '../../common/budget-wire';
import { recordUpdateTracingFlag } from '../update-tracing-flag';
import {
  emptyBudgetState,
  isEmpty,
  prune,
  reserve,
  reserveRefusal,
  settle,
  settleCheck,
  type MessageRefusal,
} from './ledger';

/** The worker beside this workflow checks what only its key can: a reserve's MAC, an operator's credential. */
const { verifyBudgetProof, authorizeBudgetRelease } = proxyLocalActivities<BudgetProofActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: [BUDGET_MESSAGE_REFUSED, RunFailureType.IdentityRefused] },
});

function refuse(r: MessageRefusal): never {
  throw ApplicationFailure.nonRetryable(r.message, BUDGET_MESSAGE_REFUSED, { reason: r.reason, ...r.details });
}

/** The worker's refusal (a failed local activity) as this message's refusal; any other failure as it is. */
function refusedBy(err: unknown, reason: BudgetRefusedReason): never {
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure)
    refuse({ reason, message: err.cause.message });
  throw err;
}

async function sealsFor(req: BudgetProofRequest): Promise<BudgetSeals> {
  try {
    return (await verifyBudgetProof(req)).seals;
  } catch (err) {
    refusedBy(err, BudgetRefusedReason.BadProof);
  }
}

/** The release validator: a credential, for a reservation held now. */
function releaseRefusal(state: BudgetState, req: unknown): MessageRefusal | undefined {
  const r = (typeof req === 'object' && req !== null ? req : {}) as Partial<Record<keyof ReleaseUpdate, unknown>>;
  if (typeof r.reservation !== 'string' || typeof r.credential !== 'string' || r.credential.trim() === '')
    return {
      reason: BudgetRefusedReason.Malformed,
      message: "a release names a reservation and carries the operator's own credential",
    };
  if (state.reservations[r.reservation]?.status !== 'held')
    return { reason: BudgetRefusedReason.NotHeld, message: `no reservation is held under ${r.reservation}` };
  return undefined;
}

/** How often an idle counter looks whether it may forget and end. */
const TIDY_MS = 3_600_000;

/** Each window's spent and reserved amounts, and the reservations still held, for the Web UI. */
function publish(state: BudgetState): void {
  const windows: Record<string, Record<string, { spent: string; reserved: string }>> = {};
  const lines: string[] = [];
  for (const w of Object.values(state.windows).sort((a, b) => a.start - b.start || a.period.localeCompare(b.period))) {
    const name = windowName(w.period, w.start, w.end);
    windows[name] = w.counters;
    lines.push(`**${name}**`);
    for (const [counter, t] of Object.entries(w.counters))
      lines.push(`- ${counter}: ${t.spent} spent, ${t.reserved} reserved`);
  }
  const held = Object.entries(state.reservations)
    .filter(([, r]) => r.status === 'held')
    .map(([id, r]) => ({ id, toolId: r.toolId, run: r.run, at: new Date(r.at).toISOString() }));
  if (held.length > 0)
    lines.push(
      '',
      `**Held** (an operator releases an in-doubt one: \`toolplane budget release <principal> <id>\`): ${held.length}`,
    );
  for (const h of held) lines.push(`- ${h.id}: ${h.toolId ?? '?'} of ${h.run ?? '?'} since ${h.at}`);
  upsertMemo({ toolplaneBudget: { windows, held } });
  setCurrentDetails(lines.length ? lines.join('\n') : 'No budget counted in any live window.');
}

// The validators run before an update enters history, never on replay. Each handler asks patched()
// first: updates a budget workflow took before issue 51 replay unchecked, as they ran.
/** The worker's reserves: refused before history when plainly wrong; counted once the worker beside it checked the MAC. */
function serveReserves(state: BudgetState, principal: string, mark: () => void): void {
  setHandler(
    reserveBudgetUpdate,
    async (req) => {
      if (!patched(Patch.BudgetSenderProof)) {
        prune(state, Date.now());
        mark();
        return reserve(state, req, principal, Date.now());
      }
      const seals = await sealsFor({ kind: 'reserve', reserve: req });
      prune(state, Date.now());
      mark();
      return reserve(state, req, principal, Date.now(), seals);
    },
    {
      validator: (req) => {
        const r = reserveRefusal(state, req, Date.now());
        if (r) refuse(r);
      },
    },
  );
}

/** The worker's settles: accepted when the proof opens the held reservation's seal, refused before history otherwise. */
function serveSettles(state: BudgetState, mark: () => void): void {
  setHandler(
    settleBudgetUpdate,
    async (req) => {
      if (!patched(Patch.BudgetSenderProof)) {
        mark();
        return settle(state, req, Date.now());
      }
      let check = settleCheck(state, req);
      let seals: BudgetSeals | undefined;
      if (check === 'ask') {
        // No seal here to open (the reserve has not arrived, or came before seals): the worker checks the proof.
        const { reservation, outcome, proof } = req;
        seals = await sealsFor({ kind: 'settle', settle: { reservation, outcome, proof } });
        check = settleCheck(state, req);
      }
      if (typeof check === 'object') refuse(check);
      mark();
      return settle(state, req, Date.now(), seals);
    },
    {
      validator: (req) => {
        const c = settleCheck(state, req);
        if (typeof c === 'object') refuse(c);
      },
    },
  );
}

/** An operator's hand release: the worker verifies the credential, as it does an approver's; the record names who released. */
function serveReleases(state: BudgetState, principal: string, mark: () => void): void {
  setHandler(
    releaseBudgetUpdate,
    async (req) => {
      let by: string;
      try {
        ({ by } = await authorizeBudgetRelease({
          reservation: req.reservation,
          ...(state.reservations[req.reservation]?.toolId !== undefined
            ? { toolId: state.reservations[req.reservation]!.toolId! }
            : {}),
          credential: req.credential,
          principal,
        }));
      } catch (err) {
        refusedBy(err, BudgetRefusedReason.NotAnOperator);
      }
      // Asked again: the call may have been settled while the worker answered.
      const r = releaseRefusal(state, req);
      if (r) refuse(r);
      mark();
      settle(state, { reservation: req.reservation, outcome: 'release' }, Date.now(), undefined, by);
      return { status: 'released' as const, by };
    },
    {
      validator: (req) => {
        const r = releaseRefusal(state, req);
        if (r) refuse(r);
      },
    },
  );
}

/**
 * One principal's budgets across runs (`toolplane-budget/<principal>`): every worker that serves toolplane's runs registers it.
 *
 * @experimental
 */
export async function budgetCounter(input: BudgetCounterInput = {}): Promise<void> {
  const principal = principalOfBudgetWorkflow(workflowInfo().workflowId) ?? workflowInfo().workflowId;
  // Carried state comes only from the run this one continues: a starter's "state" would set the counters.
  if (input.state && !workflowInfo().continuedFromExecutionRunId && patched(Patch.BudgetSenderProof))
    throw ApplicationFailure.nonRetryable(
      'a budget workflow may not start from carried state; only one continuing as new passes it on',
      RunFailureType.RunRefused,
    );
  const state = input.state ?? emptyBudgetState();
  let changed = input.state !== undefined;
  let touched = false;
  const mark = () => {
    changed = touched = true;
  };
  serveReserves(state, principal, mark);
  serveSettles(state, mark);
  serveReleases(state, principal, mark);
  setHandler(budgetWindowsQuery, () => state);
  let ending = false;
  // In the first task, which is never speculative: the SDK flag the OpenTelemetry interceptors use for
  // updates is then in history before any validator rejects an update, in a run continued as new too,
  // whose first task carries no update (update-tracing-flag.ts).
  recordUpdateTracingFlag();
  // The tidy-up runs on its own timer, so an update wakes the loop without cancelling one.
  void (async () => {
    for (;;) {
      await sleep(TIDY_MS);
      if (prune(state, Date.now())) changed = true;
      if (!touched && isEmpty(state)) ending = true;
      touched = false;
    }
  })();
  const longEnough = () =>
    workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= (input.maxHistoryEvents ?? 10_000);
  for (;;) {
    await condition(() => changed || ending || longEnough());
    if (changed) {
      changed = false;
      publish(state);
    }
    if (ending || longEnough()) {
      await condition(allHandlersFinished);
      if (ending && isEmpty(state)) return;
      if (!ending) await continueAsNew<typeof budgetCounter>({ ...input, state });
      ending = false;
    }
  }
}

// The signature clients start it by (common/budget-protocol.ts) is this workflow's.
const _startedAs: BudgetCounterWorkflow = budgetCounter;
