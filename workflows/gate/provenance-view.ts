// Workflow-safe: a run's provenance as of one production (what a model's turn saw), read without
// copying it and without making a closure per view: the gate takes one for every turn.
import { leaves, type Leaf } from '../../common/json-leaves';
import type { Label, Provenance, ProvenanceView, Sighting } from './provenance';

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
}
