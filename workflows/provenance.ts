// Workflow-safe: where every value in a run came from. Values are matched by equality after
// normalisation, so a model that retypes a value does not shed its origin.
import { sensitivityRank, type Sensitivity } from '../catalog/manifest';

export const USER_PROMPT = 'user://prompt';

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

export function normalize(value: string | number): string {
  return String(value).normalize('NFKC').toLowerCase().replace(/\s+/g, '');
}

const TOKEN_SPLIT = /[\s,;!?()[\]{}<>"'`|*]+/;

/** The values a piece of text offers: the whole text, its words, and amounts also in minor units. */
export function tokens(text: string): string[] {
  const out = new Set<string>([text]);
  // A quoted phrase is a value the writer meant as one.
  for (const m of text.matchAll(/"([^"]{1,200})"|“([^”]{1,200})”/g)) out.add((m[1] ?? m[2])!);
  for (let t of text.split(TOKEN_SPLIT)) {
    t = t.replace(/^[.:]+|[.:]+$/g, '');
    if (!t) continue;
    out.add(t);
    const amount = /^(\d+)(?:[.,](\d{1,2}))?$/.exec(t);
    if (amount) {
      const minor = Number(amount[1]) * 100 + Number((amount[2] ?? '0').padEnd(2, '0'));
      out.add(String(minor));
      out.add(String(Number(amount[1])));
    }
  }
  return [...out];
}

export interface Leaf {
  pointer: string;
  value: string | number | boolean | null;
}

export function leaves(value: unknown, pointer = ''): Leaf[] {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return [{ pointer, value }];
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, `${pointer}/${i}`));
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
      leaves(v, `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`),
    );
  }
  return [];
}

function maxSensitivity(xs: Sensitivity[], floor: Sensitivity = 'public'): Sensitivity {
  return xs.reduce((a, b) => (sensitivityRank(b) > sensitivityRank(a) ? b : a), floor);
}

function minSensitivity(xs: Sensitivity[]): Sensitivity {
  return xs.reduce((a, b) => (sensitivityRank(b) < sensitivityRank(a) ? b : a));
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

/** Labels as of one point in the run. The gate reads a turn's view, so concurrent reads cannot change its decisions. */
export interface ProvenanceView {
  productionsOf(value: string | number): Sighting[];
  contextLabel(): Label;
  labelOf(value: Leaf['value']): Label;
  callTrusted(args: unknown): boolean;
  /** Records values sent to `source` under a satisfied field rule, so its echo of them is not a foreign source. */
  noteSent(source: string, values: string[]): void;
}

export class Provenance implements ProvenanceView {
  private readonly index = new Map<string, Sighting[]>();
  private readonly context: Production[] = [];
  private readonly sent = new Map<string, Set<string>>();

  /** Records what a source put into the model's context. */
  produce(value: unknown, p: Production): void {
    const seq = this.context.length;
    this.context.push(p);
    const sentHere = this.sent.get(p.source);
    const seen = new Set<string>();
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
    };
  }

  productionsOf(value: string | number): Sighting[] {
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
