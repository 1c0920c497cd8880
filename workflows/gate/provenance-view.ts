// Workflow-safe: a run's provenance as of one production (what a model's turn saw), read without
// copying it and without making a closure per view: the gate takes one for every turn.
import { leaves, type Leaf } from '../../common/json-leaves';
import type { Label, Provenance, Sighting } from './provenance';

/** Labels as of one point in the run. The gate reads a turn's view, so concurrent reads cannot change its decisions. */
export interface ProvenanceView {
  /**
   * The distinct sightings of a value (a repeat of one already seen is not listed again), in run order.
   * Read it at once and never write it: it may be the index's own list, which later productions extend.
   */
  productionsOf(value: string | number): readonly Sighting[];
  contextLabel(): Label;
  labelOf(value: Leaf['value']): Label;
  callTrusted(args: unknown): boolean;
  /** Records values sent to `source` under a satisfied field rule, so its echo of them is not a foreign source. */
  noteSent(source: string, values: string[]): void;
  /** The text is a span of what the principal wrote (`user://prompt`), such as a street inside their request. */
  userSpan(text: string): boolean;
  /** The run's principal confirmed this value: it is their words from then on, whatever the view's point. */
  confirmed(value: string | number): boolean;
  /** Records the principal's yes to a value (`principal_confirms`). */
  confirm(value: string | number): void;
}

/** A call is trusted when every argument it carries is. */
export function callTrustedAsOf(p: Provenance, args: unknown, asOf: number): boolean {
  for (const l of leaves(args)) if (!p.labelAsOf(l.value, asOf).trusted) return false;
  return true;
}

/** A provenance as of one production: its methods read the index, no closures are made per view. */
export class Snapshot implements ProvenanceView {
  constructor(
    private readonly of: Provenance,
    private readonly asOf: number,
  ) {}

  productionsOf(value: string | number): readonly Sighting[] {
    return this.of.productionsAsOf(value, this.asOf);
  }

  contextLabel(): Label {
    return this.of.contextAsOf(this.asOf);
  }

  labelOf(value: Leaf['value']): Label {
    return this.of.labelAsOf(value, this.asOf);
  }

  callTrusted(args: unknown): boolean {
    return callTrustedAsOf(this.of, args, this.asOf);
  }

  noteSent(source: string, values: string[]): void {
    this.of.noteSent(source, values);
  }

  userSpan(text: string): boolean {
    return this.of.userSpanAsOf(text, this.asOf);
  }

  confirmed(value: string | number): boolean {
    return this.of.confirmed(value);
  }

  confirm(value: string | number): void {
    this.of.confirm(value);
  }
}
