// Workflow-safe: which granted tools a run's model may see. Plain data, so it travels in workflow input.

export interface Policy {
  /** Exact tool identities, or "*" for every granted tool. */
  allow: readonly string[] | '*';
  deny?: readonly string[];
}

export const ALLOW_ALL: Policy = { allow: '*' };

export function canUseTool(policy: Policy, toolId: string): boolean {
  if (policy.deny?.includes(toolId)) return false;
  return policy.allow === '*' || policy.allow.includes(toolId);
}
