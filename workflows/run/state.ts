// Workflow-safe: where a run stands between turns, as the run that continues it as new picks it up.
import type { RunGovernanceState } from '../gate/run-governance';
import type { LeaseRecord } from '../step-ctx';

/** Where a run stands between turns: what the run that continues it picks up. */
export interface StepState {
  position: number;
  /** Leases not yet released. */
  leases: LeaseRecord[];
  /** Calls refused or denied so far, over the whole chain (the run's ToolplaneRefusals). */
  refusals?: number;
  /** The labels and usage of the workflow's own governed calls, once it made one. */
  governance?: RunGovernanceState;
}
