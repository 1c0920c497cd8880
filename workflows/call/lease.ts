// Workflow-safe, step 4 of a call: an extension tool needs the run's extension-runtime lease. The
// extension starts only for a call that passed every gate, in a run the worker granted the lease.
import { EXTENSION_RUNTIME } from '../../catalog/capabilities';
import { serverOf } from '../../catalog/tool-id';
import type { JournalEntry } from '../journal';
import { StepErrorCode } from '../step-error';
import { refuse } from './refuse';

/** The lease id for this call, or undefined for a tool that needs none. */
export function takeLease(
  entry: JournalEntry,
  toolId: string,
  capabilities: readonly string[] | undefined,
): string | undefined {
  if (!toolId.startsWith('ext:')) return undefined;
  if (!capabilities?.includes(EXTENSION_RUNTIME)) {
    refuse(
      entry,
      StepErrorCode.LeaseMissing,
      'lease',
      `${toolId} is an extension tool and this run does not hold the ${EXTENSION_RUNTIME} capability; nothing was started`,
    );
  }
  const lease = `lease:${serverOf(toolId)}:${entry.position}`;
  entry.lease = { id: lease, states: ['granted'] };
  return lease;
}
