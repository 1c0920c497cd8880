// Workflow-safe: how a tool's output enters the run's provenance, shared by agentRun and the AI SDK tools.
import type { Sensitivity } from '../../catalog/manifest';
import { valuesAt, type ResultPlace } from '../../catalog/result-place';
import { leaves } from '../../common/json-leaves';
import type { CitedOrigin } from '../../common/wire';
import { USER_PROMPT, type Provenance } from './provenance';
import { normalize } from './tokens';

export interface ToolOutputLabels {
  toolId: string;
  output: unknown;
  /** The call's own arguments were all trusted. */
  callTrusted: boolean;
  /** What the tool cited (`ctx.cite`), as the worker verified it. */
  origins: readonly CitedOrigin[];
  sensitivity: Sensitivity;
  /** Places in this tool's results whose whole values field rules name (`catalog.placesOf(toolId)`). */
  places?: readonly ResultPlace[];
  /** The call's arguments: a principal's record equal to one of them is what the caller supplied, not a record. */
  args?: unknown;
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
  if (l.places && l.places.length > 0) producePlaces(provenance, l, l.places);
  for (const o of l.origins.filter((x) => x.trusted))
    provenance.produce(o.values, { source: USER_PROMPT, trusted: true, callTrusted: true, sensitivity: l.sensitivity });
}

/**
 * The whole values at each declared place of the result. A place is trusted as far as the call was,
 * except the principal's own records: a lookup steered by untrusted text still returns only their
 * entries, so those vouch, unless the value is one the call itself was sent.
 */
function producePlaces(provenance: Provenance, l: ToolOutputLabels, places: readonly ResultPlace[]): void {
  const callTrusted = l.callTrusted && l.origins.every((o) => o.trusted);
  let sent: Set<string> | undefined;
  for (const place of places) {
    let values = valuesAt(l.output, place);
    if (values.length === 0) continue;
    const records = place.records === true && !callTrusted;
    if (records) {
      sent ??= new Set(leaves(l.args ?? {}).map((x) => normalize(String(x.value))));
      values = values.filter((v) => !sent!.has(normalize(v)));
    }
    provenance.producePlaced(values, {
      source: place.name,
      trusted: false,
      callTrusted: callTrusted || records,
      sensitivity: l.sensitivity,
    });
  }
}
