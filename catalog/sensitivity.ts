// Workflow-safe: how sensitive a value is, in order.
export const SENSITIVITY_LEVELS = ['public', 'internal', 'confidential', 'secret'] as const;
export type Sensitivity = (typeof SENSITIVITY_LEVELS)[number];
export function sensitivityRank(s: Sensitivity): number {
  return SENSITIVITY_LEVELS.indexOf(s);
}
