// Workflow-safe: how a tool's output enters the run's provenance, shared by agentRun and the AI SDK tools.
import type { Sensitivity } from '../../catalog/manifest';
import type { CitedOrigin } from '../../common/wire';
import { USER_PROMPT, type Provenance } from './provenance';

export interface ToolOutputLabels {
  toolId: string;
  output: unknown;
  /** The call's own arguments were all trusted. */
  callTrusted: boolean;
  /** What the tool cited (`ctx.cite`), as the worker verified it. */
  origins: readonly CitedOrigin[];
  sensitivity: Sensitivity;
}

/**
 * A tool result is outside-world data. A recalled fact whose verified origin had only trusted
 * arguments is the user's own words, of the run that wrote it; a tool repeating facts vouches for
 * nothing unless every fact it cites has such an origin.
 */
export function produceToolOutput(provenance: Provenance, l: ToolOutputLabels): void {
  provenance.produce(l.output, {
    source: l.toolId,
    trusted: false,
    callTrusted: l.callTrusted && l.origins.every((o) => o.trusted),
    sensitivity: l.sensitivity,
  });
  for (const o of l.origins.filter((x) => x.trusted))
    provenance.produce(o.values, { source: USER_PROMPT, trusted: true, callTrusted: true, sensitivity: l.sensitivity });
}
