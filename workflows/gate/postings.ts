// Workflow-safe: the provenance index's postings: every distinct sighting of one normalised value,
// in run order, each with the label folded from it and those before it.
import type { Sensitivity } from '../../catalog/sensitivity';
import type { Label, Sighting } from './provenance';

export const RANK: Record<Sensitivity, number> = { public: 0, internal: 1, confidential: 2, secret: 3 };
export const higher = (a: Sensitivity, b: Sensitivity): Sensitivity => (RANK[b] > RANK[a] ? b : a);
export const lower = (a: Sensitivity, b: Sensitivity): Sensitivity => (RANK[b] < RANK[a] ? b : a);

/** The label of a value's sightings up to one of them: kept beside each, so a lookup never rescans. */
export interface Folded {
  label: Label;
  /** Lowest sensitivity among trusted sightings (a value the user wrote is the user's intent). */
  trustedMin?: Sensitivity;
  /** Highest among all. */
  max: Sensitivity;
}

/**
 * Every distinct sighting of one normalised value, in run order, each with the label of it and
 * those before it. A repeat of a sighting (same source, trust, sensitivity and exact token) adds
 * nothing any view could tell apart, so only the first is kept: a value every result repeats costs
 * no more than one seen once.
 */
export interface Posting {
  sightings: Sighting[];
  folded: Folded[];
  /** Signatures of the sightings, once there are enough that scanning them costs more than a set. */
  distinct?: Set<string>;
}

/** Sightings a posting scans before it keeps a set of their signatures. */
export const SCAN_LIMIT = 16;
export const signatureOf = (s: Sighting): string =>
  `${s.source}\u0000${s.trusted}${s.callTrusted}${s.echo}\u0000${s.sensitivity}\u0000${s.exact}`;
export const sameSighting = (a: Sighting, b: Sighting): boolean =>
  a.source === b.source &&
  a.trusted === b.trusted &&
  a.callTrusted === b.callTrusted &&
  a.echo === b.echo &&
  a.sensitivity === b.sensitivity &&
  a.exact === b.exact;

/** Whether a string comes for the first time: a short list scanned, a set once it grows. */
export class Once {
  private list: string[] = [];
  private set?: Set<string>;

  first(x: string): boolean {
    if (this.set) {
      if (this.set.has(x)) return false;
      this.set.add(x);
      return true;
    }
    if (this.list.includes(x)) return false;
    this.list.push(x);
    if (this.list.length >= SCAN_LIMIT) this.set = new Set(this.list);
    return true;
  }
}

export function withSource(sources: readonly string[], source: string): readonly string[] {
  if (sources.includes(source)) return sources;
  return Object.freeze([...sources, source].sort());
}

/**
 * The fold of a value's first sighting depends only on its source, trust and sensitivity: kept in
 * `firstFolds` and shared (it is frozen), so results each offering new values do not build the
 * same label anew.
 */
export function fold(prev: Folded | undefined, s: Sighting, firstFolds: Map<string, Folded>): Folded {
  if (!prev) {
    const key = `${s.trusted ? 1 : 0}${s.sensitivity}\u0000${s.source}`;
    let first = firstFolds.get(key);
    if (!first) firstFolds.set(key, (first = Object.freeze(foldFrom(undefined, s))));
    return first;
  }
  return foldFrom(prev, s);
}

export function foldFrom(prev: Folded | undefined, s: Sighting): Folded {
  const trustedMin = s.trusted
    ? prev?.trustedMin
      ? lower(prev.trustedMin, s.sensitivity)
      : s.sensitivity
    : prev?.trustedMin;
  const max = prev ? higher(prev.max, s.sensitivity) : higher('public', s.sensitivity);
  const sources = withSource(prev?.label.sources ?? [], s.source);
  return {
    trustedMin,
    max,
    label: Object.freeze({
      sources: sources as string[],
      trusted: trustedMin !== undefined,
      sensitivity: trustedMin ?? max,
      synthesized: false,
    }),
  };
}

export const EMPTY_CONTEXT: Label = Object.freeze({
  sources: Object.freeze([]) as unknown as string[],
  trusted: true,
  sensitivity: 'public',
  synthesized: true,
});
