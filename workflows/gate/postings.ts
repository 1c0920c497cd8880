// Workflow-safe: the provenance index's postings: every distinct sighting of one normalised value,
// in run order, each with the label folded from it and those before it.
import type { Sensitivity } from '../../catalog/sensitivity';
import type { Label, Production, Sighting } from './provenance';

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
 * no more than one seen once. Most values are seen once: such a posting holds a one-element list and
 * the shared fold of its sighting, nothing else (the per-sighting folds are kept from the second on).
 */
export class Posting {
  readonly sightings: Sighting[];
  /** The fold of every sighting (the last one's): a view that sees them all (the usual case) reads its label here. */
  last: Folded;
  /** The last sighting's place in the run. */
  lastSeq: number;
  /** Each sighting's fold with those before it, once there are two or more (one sighting's is `last`). */
  folded: Folded[] | undefined = undefined;
  /** Signatures of the sightings, once there are enough that scanning them costs more than a set. */
  distinct: Set<string> | undefined = undefined;

  constructor(s: Sighting, firstFolds: FirstFolds) {
    // A literal of one element: an empty list's first push would reserve room for seventeen.
    this.sightings = [s];
    this.last = fold(undefined, s, firstFolds);
    this.lastSeq = s.seq;
  }

  /** The fold of the first `n` sightings (1 <= n <= their count). */
  foldAt(n: number): Folded {
    return this.folded === undefined ? this.last : this.folded[n - 1]!;
  }

  /** A sighting after those of the posting, folded into its labels. */
  extend(s: Sighting, firstFolds: FirstFolds): void {
    const folded = fold(this.last, s, firstFolds);
    if (this.folded === undefined) this.folded = [this.last, folded];
    else this.folded.push(folded);
    this.sightings.push(s);
    this.last = folded;
    this.lastSeq = s.seq;
  }
}

/** Sightings a posting scans before it keeps a set of their signatures. */
export const SCAN_LIMIT = 16;
export const signatureOf = (p: Production, exact: string, echo: boolean): string =>
  `${p.source}\u0000${p.trusted}${p.callTrusted}${echo}\u0000${p.sensitivity}\u0000${exact}`;
/** A sighting the production would make of `exact` (with `echo`) is `s` again. */
export const sameSighting = (s: Sighting, p: Production, exact: string, echo: boolean): boolean =>
  s.exact === exact &&
  s.source === p.source &&
  s.trusted === p.trusted &&
  s.callTrusted === p.callTrusted &&
  s.echo === echo &&
  s.sensitivity === p.sensitivity;

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
