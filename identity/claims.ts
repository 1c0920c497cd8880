// The claims of a run's credential that name what it is bound to, readable without verifying it.
import { decodeJwt } from 'jose';
import { INPUT_BINDING_CLAIM } from '../common/input-binding';

/** The claim a run's credential names its workflow id in. */
export const WORKFLOW_ID_CLAIM = 'toolplane_workflow_id';

/** The workflow id a credential names (read, not verified: the worker verifies), if any. */
export function boundWorkflowId(credential: string | undefined): string | undefined {
  if (!credential) return undefined;
  try {
    const bound = decodeJwt(credential)[WORKFLOW_ID_CLAIM];
    return typeof bound === 'string' ? bound : undefined;
  } catch {
    return undefined;
  }
}

/** The input binding a credential names (`toolplane_input`; read, not verified), if any. */
export function boundInput(credential: string | undefined): string | undefined {
  if (!credential) return undefined;
  try {
    const bound = decodeJwt(credential)[INPUT_BINDING_CLAIM];
    return typeof bound === 'string' ? bound : undefined;
  } catch {
    return undefined;
  }
}
