// Workflow-safe: where every value in a run came from. Values are matched by equality after
// normalisation, so a model that retypes a value does not shed its origin.
import { SENSITIVITY_LEVELS, type Sensitivity } from '../../catalog/sensitivity';
import type { Leaf } from '../../common/json-leaves';
import { PostingIndex } from './posting-index';
import { EMPTY_CONTEXT, higher, RANK, withSource, type Posting } from './postings';
import { isSpanOf, spanText, textsOf } from './prompt-spans';
import { callTrustedAsOf, Snapshot, type ProvenanceView } from './provenance-view';

export type { ProvenanceView } from './provenance-view';
import { normalize } from './tokens';

export const USER_PROMPT = 'user://prompt';

const NONE: readonly Sighting[] = Object.freeze([]);

/** One source having produced a value in this run. */
export interface Production {
  source: string;
  /** Only the user's own words are trusted; every tool result is outside-world data. */
  trusted: boolean;
  /** The call that produced it had only trusted arguments (it was not steered by untrusted input). */
  callTrusted: boolean;
  sensitivity: Sensitivity;
}

export interface Label {
  sources: string[];
  trusted: boolean;
  sensitivity: Sensitivity;
  /** No source produced this exact value: the model wrote it, so it carries its whole context. */
  synthesized: boolean;
}

/** One production of one value: the production, the exact token it wrote, and when. */
export interface Sighting extends Production {
  /** The token as the source wrote it, byte for byte: what a protected field forwards. */
  exact: string;
  /** The production's place in the run; a snapshot sees only those before it. */
  seq: number;
  /** The source repeated a value the run itself sent it under a satisfied field rule (a receipt). */
  echo: boolean;
}

/** The provenance a continued run starts from: compact, plain JSON. */
export interface ProvenanceState {
  v: 1;
  /** Productions so far: the next one's `seq`. */
  count: number;
  /** Source names; rows refer to them by index. */
  sources: string[];
  context: { sources: number[]; trusted: boolean; sensitivity: Sensitivity };
  /** Per normalised value: [source, flags (1 trusted, 2 callTrusted, 4 echo), sensitivity rank, seq, exact or 0 when it is the key]. */
  index: [string, [number, number, number, number, string | 0][]][];
  sent: [number, string[]][];
  /** The principal's texts, each with the production that brought it, for spans of them; absent when none. */
  spans?: [number, string][];
  /** Values the principal confirmed (normalised); absent when none. */
  confirmed?: string[];
}

/**
 * Where every value came from, indexed: a label costs a map lookup whatever the length of the run.
 * The context label is folded in as productions arrive; each value keeps its sightings in run
 * order with the label of each prefix, so a snapshot reads its label without rescanning.
 */
export class Provenance extends PostingIndex implements ProvenanceView {
  /** The context label after each production since `base`. */
  private readonly context: Label[] = [];
  private base = 0;
  private baseContext: Label = EMPTY_CONTEXT;
  private readonly sent = new Map<string, Set<string>>();
  /** The principal's own texts in span form, with the production that brought each (in run order). */
  private readonly spans: [number, string][] = [];
  private readonly spanSeen = new Set<string>();
  /** Values the principal confirmed, normalised: their words from the answer on. */
  private readonly confirmedValues = new Set<string>();

  private get count(): number {
    return this.base + this.context.length;
  }

  private contextAt(asOf: number): Label {
    const i = Math.min(asOf, this.count) - this.base;
    if (i < 0) throw new Error(`provenance before production ${this.base} was carried over, not kept`);
    return i === 0 ? this.baseContext : this.context[i - 1]!;
  }

  /** Records what a source put into the model's context. */
  produce(value: unknown, p: Production): void {
    const seq = this.count;
    const before = this.contextAt(seq);
    this.context.push(
      before.sources.includes(p.source) &&
        (p.trusted || !before.trusted) &&
        RANK[p.sensitivity] <= RANK[before.sensitivity]
        ? before
        : Object.freeze({
            sources: withSource(before.sources, p.source) as string[],
            trusted: before.trusted && p.trusted,
            sensitivity: higher(before.sensitivity, p.sensitivity),
            synthesized: true,
          }),
    );
    this.offer(value, p, seq, this.sent.get(p.source));
    if (p.trusted && p.source === USER_PROMPT) this.keepSpans(value, seq);
  }

  private keepSpans(value: unknown, seq: number): void {
    for (const text of textsOf(value)) {
      if (this.spanSeen.has(text)) continue;
      this.spanSeen.add(text);
      this.spans.push([seq, text]);
    }
  }

  /**
   * Whole values found at a place in the result just produced (`/*\/recipient`): sightings under the
   * place's own name, at the result's own position, adding nothing to the context (the result did).
   */
  producePlaced(values: readonly (string | number)[], p: Production): void {
    const seq = this.count - 1;
    if (seq < this.base) throw new Error('a placed value needs the result it was found in');
    for (const v of values) {
      const exact = String(v);
      const key = normalize(exact);
      if (key) this.append(key, exact, p, seq, false);
    }
  }

  /** Whether `text` is a span of a text the principal wrote before production `asOf`. */
  userSpanAsOf(text: string, asOf: number): boolean {
    const wanted = spanText(text);
    for (const [seq, t] of this.spans) if (seq < asOf && isSpanOf(wanted, t)) return true;
    return false;
  }

  userSpan(text: string): boolean {
    return this.userSpanAsOf(text, Number.MAX_SAFE_INTEGER);
  }

  confirmed(value: string | number): boolean {
    return this.confirmedValues.size > 0 && this.confirmedValues.has(normalize(String(value)));
  }

  confirm(value: string | number): void {
    const key = normalize(String(value));
    if (key) this.confirmedValues.add(key);
  }

  noteSent(source: string, values: string[]): void {
    // A source sent nothing still gets its (empty) entry: the state a continued run carries lists it.
    let set = this.sent.get(source);
    if (set === undefined) this.sent.set(source, (set = new Set<string>()));
    for (const v of values) set.add(normalize(v));
  }

  /** The labels as the model saw them now; later productions are invisible to the view. */
  snapshot(): ProvenanceView {
    return new Snapshot(this, this.count);
  }

  /** How many of a posting's sightings came before `asOf` (sightings are in run order). */
  private static visible(posting: Posting, asOf: number): number {
    const xs = posting.sightings;
    if (posting.lastSeq < asOf) return xs.length;
    let lo = 0;
    let hi = xs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (xs[mid]!.seq < asOf) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The context label before production `asOf`. */
  contextAsOf(asOf: number): Label {
    return this.contextAt(asOf);
  }

  /** A value's label as of production `asOf`: its sightings' fold, or the context's when none came before. */
  labelAsOf(value: Leaf['value'], asOf: number): Label {
    if (value === null || typeof value === 'boolean') return this.contextAt(asOf);
    const posting = this.postingOf(value);
    if (posting === undefined) return this.contextAt(asOf);
    if (posting.lastSeq < asOf) return posting.last.label;
    const n = Provenance.visible(posting, asOf);
    return n === 0 ? this.contextAt(asOf) : posting.foldAt(n).label;
  }

  /** A value's distinct sightings before production `asOf`. */
  productionsAsOf(value: string | number, asOf: number): readonly Sighting[] {
    const posting = this.postingOf(value);
    if (!posting) return NONE;
    // The posting's own list when every sighting is visible (the usual case): it is read, never written.
    if (posting.lastSeq < asOf) return posting.sightings;
    const n = Provenance.visible(posting, asOf);
    return n === posting.sightings.length ? posting.sightings : posting.sightings.slice(0, n);
  }

  productionsOf(value: string | number): readonly Sighting[] {
    return this.productionsAsOf(value, Number.MAX_SAFE_INTEGER);
  }

  /** What the model writes carries the labels of everything it has read. */
  contextLabel(): Label {
    return this.contextAt(this.count);
  }

  labelOf(value: Leaf['value']): Label {
    return this.labelAsOf(value, Number.MAX_SAFE_INTEGER);
  }

  callTrusted(args: unknown): boolean {
    return callTrustedAsOf(this, args, Number.MAX_SAFE_INTEGER);
  }

  /** Everything a continued run needs to label values exactly as this run would. */
  state(): ProvenanceState {
    const sources: string[] = [];
    const ids = new Map<string, number>();
    const id = (s: string) => {
      let i = ids.get(s);
      if (i === undefined) ids.set(s, (i = sources.push(s) - 1));
      return i;
    };
    const ctx = this.contextLabel();
    return {
      v: 1,
      count: this.count,
      context: { sources: ctx.sources.map(id), trusted: ctx.trusted, sensitivity: ctx.sensitivity },
      index: [...this.index].map(([key, posting]) => [
        key,
        posting.sightings.map((s) => [
          id(s.source),
          (s.trusted ? 1 : 0) | (s.callTrusted ? 2 : 0) | (s.echo ? 4 : 0),
          RANK[s.sensitivity],
          s.seq,
          s.exact === key ? 0 : s.exact,
        ]),
      ]),
      sent: [...this.sent].map(([source, values]) => [id(source), [...values]]),
      sources,
      ...(this.spans.length > 0 ? { spans: [...this.spans] } : {}),
      ...(this.confirmedValues.size > 0 ? { confirmed: [...this.confirmedValues] } : {}),
    };
  }

  /** A provenance that labels every value as the run that wrote `state` did at its end. */
  static restore(state: ProvenanceState): Provenance {
    if (state?.v !== 1) throw new Error(`unknown provenance state version ${String(state?.v)}`);
    const source = (i: number) => {
      const s = state.sources[i];
      if (s === undefined) throw new Error(`provenance state names source #${i}, which it does not list`);
      return s;
    };
    const p = new Provenance();
    p.base = state.count;
    p.baseContext = Object.freeze({
      sources: Object.freeze(state.context.sources.map(source).sort()) as string[],
      trusted: state.context.trusted,
      sensitivity: state.context.sensitivity,
      synthesized: true,
    });
    for (const [key, rows] of state.index) {
      for (const [src, flags, rank, seq, exact] of rows) {
        const production: Production = {
          source: source(src),
          trusted: (flags & 1) !== 0,
          callTrusted: (flags & 2) !== 0,
          sensitivity: SENSITIVITY_LEVELS[rank]!,
        };
        p.append(key, exact === 0 ? key : exact, production, seq, (flags & 4) !== 0);
      }
    }
    for (const [src, values] of state.sent) p.sent.set(source(src), new Set(values));
    for (const [seq, text] of state.spans ?? []) {
      p.spans.push([seq, text]);
      p.spanSeen.add(text);
    }
    for (const key of state.confirmed ?? []) p.confirmedValues.add(key);
    return p;
  }
}
