// Workflow-safe: how the budget workflow is asked. The worker's budget activities reserve and settle
// through these updates (update-with-start); an operator settles an in-doubt call's reservation
// through `settleBudget` too, and reads the windows with `budgetWindows`.
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { BudgetAnswer } from '../../common/wire';
import type { BudgetState, ReservationStatus, ReserveUpdate, SettleUpdate } from './ledger';

export const reserveBudgetUpdate = defineUpdate<BudgetAnswer, [ReserveUpdate]>('reserveBudget');
export const settleBudgetUpdate = defineUpdate<ReservationStatus, [SettleUpdate]>('settleBudget');
export const budgetWindowsQuery = defineQuery<BudgetState>('budgetWindows');
