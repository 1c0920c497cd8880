// Workflow-safe, step 4 of a call: an extension tool needs the run's extension-runtime lease. The
// extension starts only for a call that passed every gate, in a run the worker granted the lease.
import { EXTENSION_RUNTIME } from '../../catalog/capabilities';
import { leaseId } from '../../catalog/lease-id';
import { StepErrorCode } from '../step-error';
import { refusal, type Refusal } from './refuse';

/** The lease id for this call, undefined for a tool that needs none, or the refusal. */
export function takeLease(
  toolId: string,
  position: number,
  capabilities: readonly string[] | undefined,
): string | undefined | Refusal {
  if (!toolId.startsWith('ext:')) return undefined;
  if (!capabilities?.includes(EXTENSION_RUNTIME))
    return refusal(
      StepErrorCode.LeaseMissing,
      'lease',
      `${toolId} is an extension tool and this run does not hold the ${EXTENSION_RUNTIME} capability; nothing was started`,
    );
  return leaseId(toolId, position);
}
