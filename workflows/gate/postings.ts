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
  /**
   * The label of every sighting (the last fold's) and the last sighting's place in the run, kept on
   * the posting itself: a view that sees them all (the usual case) reads its label here, without
   * reaching into the lists.
   */
  label: Label;
  lastSeq: number;
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

/**
 * Whether a pair of strings comes for the first time: short lists scanned (no text is made for a
 * pair), a set of the pairs joined once they grow.
 */
export class Once {
  private readonly keys: string[] = [];
  private readonly exacts: string[] = [];
  private set?: Set<string>;

  first(key: string, exact: string): boolean {
    if (this.set) {
      const pair = `${key}\u0000${exact}`;
      if (this.set.has(pair)) return false;
      this.set.add(pair);
      return true;
    }
    for (let i = 0; i < this.keys.length; i++) if (this.keys[i] === key && this.exacts[i] === exact) return false;
    this.keys.push(key);
    this.exacts.push(exact);
    if (this.keys.length >= SCAN_LIMIT) this.set = new Set(this.keys.map((k, i) => `${k}\u0000${this.exacts[i]!}`));
    return true;
  }
}

export function withSource(sources: readonly string[], source: string): readonly string[] {
  if (sources.includes(source)) return sources;
  return Object.freeze([...sources, source].sort());
}

/** First folds per source, by trust and sensitivity (`(trusted ? 4 : 0) + RANK[sensitivity]`). */
export type FirstFolds = Map<string, (Folded | undefined)[]>;

/**
 * The fold of a value's first sighting depends only on its source, trust and sensitivity: kept in
 * `firstFolds` and shared (it is frozen), so results each offering new values do not build the
 * same label anew (nor a text to look it up by).
 */
export function fold(prev: Folded | undefined, s: Sighting, firstFolds: FirstFolds): Folded {
  if (!prev) {
    let bySource = firstFolds.get(s.source);
    if (!bySource) firstFolds.set(s.source, (bySource = []));
    const at = (s.trusted ? 4 : 0) + RANK[s.sensitivity];
    return (bySource[at] ??= Object.freeze(foldFrom(undefined, s)));
  }
  return foldFrom(prev, s);
}

/** A sighting after those of its posting, folded into its labels. */
export function extend(posting: Posting, s: Sighting, firstFolds: FirstFolds): void {
  const folded = fold(posting.folded.at(-1), s, firstFolds);
  posting.folded.push(folded);
  posting.sightings.push(s);
  posting.label = folded.label;
  posting.lastSeq = s.seq;
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
