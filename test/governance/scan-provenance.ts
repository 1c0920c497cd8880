// The provenance as it was before the index: every label rescans every production. Kept as the
// reference the indexed Provenance must agree with (test/governance/provenance-index.test.ts).
import { sensitivityRank, type Sensitivity } from '../../catalog/manifest';
import { normalize, tokens } from '../../workflows/gate/tokens';
import {
  USER_PROMPT,
  type Label,
  type Production,
  type ProvenanceView,
  type Sighting,
} from '../../workflows/gate/provenance';
import { leaves, type Leaf } from '../../common/json-leaves';

export { USER_PROMPT };

function maxSensitivity(xs: Sensitivity[], floor: Sensitivity = 'public'): Sensitivity {
  return xs.reduce((a, b) => (sensitivityRank(b) > sensitivityRank(a) ? b : a), floor);
}

function minSensitivity(xs: Sensitivity[]): Sensitivity {
  return xs.reduce((a, b) => (sensitivityRank(b) < sensitivityRank(a) ? b : a));
}

const spanForm = (t: string) => t.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();

export class ScanProvenance implements ProvenanceView {
  private readonly index = new Map<string, Sighting[]>();
  private readonly context: Production[] = [];
  private readonly sent = new Map<string, Set<string>>();
  private readonly userTexts: { seq: number; text: string }[] = [];
  private readonly confirmedValues = new Set<string>();

  /** Records what a source put into the model's context. */
  produce(value: unknown, p: Production): void {
    const seq = this.context.length;
    this.context.push(p);
    const sentHere = this.sent.get(p.source);
    const seen = new Set<string>();
    if (p.trusted && p.source === 'user://prompt')
      for (const leaf of leaves(value))
        if (typeof leaf.value === 'string') this.userTexts.push({ seq, text: spanForm(leaf.value) });
    for (const leaf of leaves(value)) {
      if (leaf.value === null || typeof leaf.value === 'boolean') continue;
      const values = typeof leaf.value === 'string' ? tokens(leaf.value) : [String(leaf.value)];
      for (const v of values) {
        const key = normalize(v);
        // The same key may come as different exact tokens; each is kept, once.
        if (!key || seen.has(`${key}\u0000${v}`)) continue;
        seen.add(`${key}\u0000${v}`);
        const list = this.index.get(key) ?? [];
        list.push({ ...p, exact: v, seq, echo: !p.trusted && (sentHere?.has(key) ?? false) });
        this.index.set(key, list);
      }
    }
  }

  confirmed(value: string | number): boolean {
    return this.confirmedValues.has(normalize(String(value)));
  }

  confirm(value: string | number): void {
    this.confirmedValues.add(normalize(String(value)));
  }

  noteSent(source: string, values: string[]): void {
    const set = this.sent.get(source) ?? new Set<string>();
    for (const v of values) set.add(normalize(v));
    this.sent.set(source, set);
  }

  /** The labels as the model saw them now; later productions are invisible to the view. */
  snapshot(): ProvenanceView {
    return this.view(this.context.length);
  }

  private view(asOf: number): ProvenanceView {
    const productionsOf = (value: string | number) =>
      (this.index.get(normalize(value)) ?? []).filter((s) => s.seq < asOf);
    const contextLabel = (): Label => {
      const context = this.context.slice(0, asOf);
      return {
        sources: [...new Set(context.map((p) => p.source))].sort(),
        trusted: context.every((p) => p.trusted),
        sensitivity: maxSensitivity(context.map((p) => p.sensitivity)),
        synthesized: true,
      };
    };
    const labelOf = (value: Leaf['value']): Label => {
      if (value === null || typeof value === 'boolean') return contextLabel();
      const prods = productionsOf(value);
      if (prods.length === 0) return contextLabel();
      const trusted = prods.filter((p) => p.trusted);
      return {
        sources: [...new Set(prods.map((p) => p.source))].sort(),
        // A value the user wrote is the user's intent, whoever else also wrote it.
        trusted: trusted.length > 0,
        sensitivity:
          trusted.length > 0
            ? minSensitivity(trusted.map((p) => p.sensitivity))
            : maxSensitivity(prods.map((p) => p.sensitivity)),
        synthesized: false,
      };
    };
    return {
      productionsOf,
      contextLabel,
      labelOf,
      // A call is trusted when every argument it carries is.
      callTrusted: (args) => leaves(args).every((l) => labelOf(l.value).trusted),
      noteSent: (source, values) => this.noteSent(source, values),
      confirmed: (value) => this.confirmed(value),
      confirm: (value) => this.confirm(value),
      userSpan: (text) => {
        const wanted = spanForm(text);
        if (wanted.length < 2 || !/[\p{L}\p{N}]/u.test(wanted)) return false;
        const escaped = wanted.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        const edge = (c: string) => (/[\p{L}\p{N}]/u.test(c) ? '(?<![\\p{L}\\p{N}])' : '');
        const tail = (c: string) => (/[\p{L}\p{N}]/u.test(c) ? '(?![\\p{L}\\p{N}])' : '');
        const re = new RegExp(edge(wanted[0]!) + escaped + tail(wanted[wanted.length - 1]!), 'u');
        return this.userTexts.some((t) => t.seq < asOf && re.test(t.text));
      },
    };
  }

  userSpan(text: string): boolean {
    return this.view(Number.MAX_SAFE_INTEGER).userSpan(text);
  }

  productionsOf(value: string | number): readonly Sighting[] {
    return this.view(Number.MAX_SAFE_INTEGER).productionsOf(value);
  }

  /** What the model writes carries the labels of everything it has read. */
  contextLabel(): Label {
    return this.view(Number.MAX_SAFE_INTEGER).contextLabel();
  }

  labelOf(value: Leaf['value']): Label {
    return this.view(Number.MAX_SAFE_INTEGER).labelOf(value);
  }

  callTrusted(args: unknown): boolean {
    return this.view(Number.MAX_SAFE_INTEGER).callTrusted(args);
  }
}
