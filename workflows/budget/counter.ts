// Workflow-safe: one principal's budgets across runs, kept in Temporal itself. One long-lived
// workflow per principal (`toolplane-budget/<principal>`, see common/budget-id.ts) holds the spent
// and reserved amounts per UTC-aligned window, and the reservations by id. Its updates run one at a
// time and never await, so a check and its reservation are one step. It continues as new with its
// whole state (the dedupe records included), and ends once nothing is held or remembered.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import { windowName } from '../../catalog/budget';
import { principalOfBudgetWorkflow } from '../../common/budget-id';
import {
  budgetWindowsQuery,
  reserveBudgetUpdate,
  settleBudgetUpdate,
  type BudgetCounterInput,
  type BudgetCounterWorkflow,
  type BudgetState,
} from '../../common/budget-protocol';
import { emptyBudgetState, isEmpty, prune, reserve, settle } from './ledger';

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
    lines.push('', `**Held** (settle an in-doubt one with the \`settleBudget\` update): ${held.length}`);
  for (const h of held) lines.push(`- ${h.id}: ${h.toolId ?? '?'} of ${h.run ?? '?'} since ${h.at}`);
  upsertMemo({ toolplaneBudget: { windows, held } });
  setCurrentDetails(lines.length ? lines.join('\n') : 'No budget counted in any live window.');
}

/**
 * One principal's budgets across runs (`toolplane-budget/<principal>`): every worker that serves toolplane's runs registers it.
 *
 * @experimental
 */
export async function budgetCounter(input: BudgetCounterInput = {}): Promise<void> {
  const principal = principalOfBudgetWorkflow(workflowInfo().workflowId) ?? workflowInfo().workflowId;
  const state = input.state ?? emptyBudgetState();
  let changed = input.state !== undefined;
  let touched = false;
  setHandler(reserveBudgetUpdate, (req) => {
    prune(state, Date.now());
    changed = touched = true;
    return reserve(state, req, principal, Date.now());
  });
  setHandler(settleBudgetUpdate, (req) => {
    changed = touched = true;
    return settle(state, req, Date.now());
  });
  setHandler(budgetWindowsQuery, () => state);
  let ending = false;
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
