// Workflow-safe, shared by workflows, activities and the client: the one spelling of a principal's
// budget workflow id. One workflow per principal keeps that principal's budgets across runs.

const PREFIX = 'toolplane-budget/';

/** `toolplane-budget/<principal>`: the id of the workflow counting this principal's budgets. */
export function budgetWorkflowId(principal: string): string {
  return `${PREFIX}${principal}`;
}

/** The principal a budget workflow id names, or undefined for any other id. */
export function principalOfBudgetWorkflow(workflowId: string): string | undefined {
  return workflowId.startsWith(PREFIX) ? workflowId.slice(PREFIX.length) : undefined;
}
