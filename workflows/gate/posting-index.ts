// Workflow-safe: the provenance index itself: each normalised value a run's sources produced, with
// its posting (postings.ts). `Provenance` adds the context label, what was sent, views and state.
import { normalize, isOneToken, tokens } from './tokens';
import { Posting, sameSighting, SCAN_LIMIT, signatureOf, type FirstFolds } from './postings';
import type { Production, Sighting } from './provenance';

/** Fields in the order `Sighting` lists them, so every sighting shares one shape. */
const sightingOf = (exact: string, p: Production, seq: number, echo: boolean): Sighting => ({
  source: p.source,
  trusted: p.trusted,
  callTrusted: p.callTrusted,
  sensitivity: p.sensitivity,
  exact,
  seq,
  echo,
});

/** Postings by normalised value: a value's sightings cost one map lookup whatever the length of the run. */
export class PostingIndex {
  protected readonly index = new Map<string, Posting>();
  private readonly firstFolds: FirstFolds = new Map();
  /** The last value looked up and its posting (a protected field's sightings, then its label); forgotten on a new posting. */
  private lookedUp: string | number | undefined;
  private lookedUpPosting: Posting | undefined;

  /**
   * Every scalar of a produced value in document order (those `leaves` lists), each token of it
   * indexed: walked here without a pointer or a list made per scalar, as every result is.
   */
  protected offer(value: unknown, p: Production, seq: number, sentHere: Set<string> | undefined): void {
    if (typeof value === 'string') {
      if (isOneToken(value)) this.offerToken(value, p, seq, sentHere);
      else for (const v of tokens(value)) this.offerToken(v, p, seq, sentHere);
    } else if (typeof value === 'number') this.offerToken(String(value), p, seq, sentHere);
    else if (Array.isArray(value)) {
      // A hole in a sparse array is no element (as `leaves` skips it).
      for (let i = 0; i < value.length; i++) if (i in value) this.offer(value[i], p, seq, sentHere);
    } else if (value !== null && typeof value === 'object') {
      const o = value as Record<string, unknown>;
      for (const k of Object.keys(o)) this.offer(o[k], p, seq, sentHere);
    }
  }

  private offerToken(v: string, p: Production, seq: number, sentHere: Set<string> | undefined): void {
    const key = normalize(v);
    if (key) this.append(key, v, p, seq, !p.trusted && (sentHere?.has(key) ?? false));
  }

  /**
   * A sighting of `key` as `exact`, unless its posting has that very sighting already (the same key
   * may come as different exact tokens: each is kept, once; a repeat within one production too).
   */
  protected append(key: string, exact: string, p: Production, seq: number, echo: boolean): void {
    const posting = this.index.get(key);
    if (!posting) {
      this.index.set(key, new Posting(sightingOf(exact, p, seq, echo), this.firstFolds));
      this.lookedUp = undefined;
      return;
    }
    if (posting.distinct) {
      const signature = signatureOf(p, exact, echo);
      if (posting.distinct.has(signature)) return;
      posting.distinct.add(signature);
    } else {
      const seen = posting.sightings;
      for (let i = 0; i < seen.length; i++) if (sameSighting(seen[i]!, p, exact, echo)) return;
      if (seen.length + 1 >= SCAN_LIMIT)
        posting.distinct = new Set([...seen.map((x) => signatureOf(x, x.exact, x.echo)), signatureOf(p, exact, echo)]);
    }
    posting.extend(sightingOf(exact, p, seq, echo), this.firstFolds);
  }

  /** A value's posting, if any source produced it. */
  protected postingOf(value: string | number): Posting | undefined {
    if (value === this.lookedUp) return this.lookedUpPosting;
    const posting = this.index.get(normalize(value));
    this.lookedUp = value;
    this.lookedUpPosting = posting;
    return posting;
  }
}
