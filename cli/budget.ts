// `toolplane budget show | release`: an operator's view of one principal's budgets across runs (each
// window's spent and reserved amounts, the reservations still held), and their hand release of a held
// reservation whose call did not land. A release carries the operator's own credential (--credential,
// --credential-file or TOOLPLANE_CREDENTIAL): the worker beside the budget workflow verifies it, as it
// verifies an approver's, and the record names who released.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Command } from 'commander';
import { windowName } from '../catalog/budget';
import { ToolplaneError } from '../catalog/errors';
import { ErrorCode } from '../catalog/error-codes';
import { budgetWorkflowId } from '../common/budget-id';
import { budgetWindowsQuery, releaseBudgetUpdate, type BudgetState } from '../common/budget-protocol';
import { decider, withDeciderOptions } from './decide';
import { usageError } from './exit-codes';
import { emit, onRun, onRunningRun, withClient, withCommonOptions, type Cli, type CommonOptions } from './shared';

interface ReleaseOptions extends CommonOptions {
  credential?: string;
  credentialFile?: string;
  reason?: string;
}

/** The windows and held reservations, as an operator reads them. */
export function budgetLines(principal: string, state: BudgetState): string[] {
  const lines = [`${budgetWorkflowId(principal)}`];
  const windows = Object.values(state.windows).sort((a, b) => a.start - b.start || a.period.localeCompare(b.period));
  if (windows.length === 0) lines.push('  no budget counted in any live window');
  for (const w of windows) {
    lines.push(`  ${windowName(w.period, w.start, w.end)}`);
    for (const [counter, t] of Object.entries(w.counters))
      lines.push(`    ${counter}: ${t.spent} spent, ${t.reserved} reserved`);
  }
  const held = Object.entries(state.reservations).filter(([, r]) => r.status === 'held');
  lines.push(`  held: ${held.length}`);
  for (const [id, r] of held)
    lines.push(`    ${id}  ${r.toolId ?? '?'} of ${r.run ?? '?'} since ${new Date(r.at).toISOString()}`);
  return lines;
}

export function registerBudget(program: Command, cli: Cli): void {
  const budget = program
    .command('budget')
    .description("a principal's budgets across runs: show them, or release a held reservation");

  withCommonOptions(
    budget.command('show <principal>').description("each window's spent and reserved amounts, and what is held"),
  ).action((principal: string, opts: CommonOptions) =>
    withClient(opts, async (c, settings) => {
      const workflowId = budgetWorkflowId(principal);
      const state = await onRun(workflowId, settings, () => c.workflow.getHandle(workflowId).query(budgetWindowsQuery));
      emit(cli, opts, { workflowId, ...state }, () => budgetLines(principal, state));
    }),
  );

  withCommonOptions(
    withDeciderOptions(
      budget
        .command('release <principal> <reservation>')
        .description(
          "give back a held reservation whose call did not land (an operator's action: it needs your credential)",
        )
        .option('--reason <text>', 'why (recorded with the release)'),
    ),
  ).action((principal: string, reservation: string, opts: ReleaseOptions) =>
    withClient(opts, async (c, settings) => {
      const { credential } = decider(opts);
      if (credential === undefined)
        throw usageError(
          'a release needs your own credential: --credential, --credential-file or TOOLPLANE_CREDENTIAL',
        );
      const workflowId = budgetWorkflowId(principal);
      const answer = await onRunningRun(c, workflowId, settings, async () => {
        try {
          return await c.workflow.getHandle(workflowId).executeUpdate(releaseBudgetUpdate, {
            args: [{ reservation, credential, ...(opts.reason ? { reason: opts.reason } : {}) }],
          });
        } catch (err) {
          if (err instanceof WorkflowUpdateFailedError)
            throw new ToolplaneError(
              ErrorCode.BudgetReleaseRefused,
              `${workflowId} refused to release ${reservation}: ${err.cause?.message ?? err.message}`,
            );
          throw err;
        }
      });
      emit(cli, opts, { workflowId, reservation, ...answer }, () => [
        `${workflowId}: ${reservation} released by ${answer.by}`,
      ]);
    }),
  );
}
