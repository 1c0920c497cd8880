// Workflow-safe: a place in a source's result (`/*/recipient` where `/*/sender` is "me"): a field
// rule naming one is satisfied only by a whole value found there, never by a word inside other text.
import { z } from 'zod';
import { foldText } from './fold';
import { pointerTokens } from './json-pointer';
import { sourceId } from './manifest-fields';

export const resultPointer = z
  .string()
  .regex(/^(\/([^~/]|~[01])*)*$/, 'a JSON pointer into the result, "*" matching any element, such as "/*/recipient"')
  .meta({
    title: 'result pointer',
    description: "A JSON pointer into a source's result; a `*` token matches every element of an array or object.",
    examples: ['/*/recipient'],
  });

const siblingValue = z.union([z.string(), z.number(), z.boolean()]);

export const ResultPlaceDecl = z
  .strictObject({
    source: sourceId.describe('The tool whose results hold the place.'),
    at: resultPointer,
    where: z
      .record(z.string().min(1), siblingValue)
      .optional()
      .describe(
        'Conditions on fields beside the value (in the same object): `{ sender: me }` admits a recipient only from a transaction the principal sent. Compared after normalisation.',
      ),
  })
  .meta({
    title: 'place',
    description:
      "Whole values at one place in a source's results, optionally only where sibling fields hold given values.",
    examples: [{ source: 'tool://bank/get_transactions', at: '/*/recipient', where: { sender: 'me' } }],
  });
export type ResultPlaceDecl = z.infer<typeof ResultPlaceDecl>;

/** A `from_sources` entry: a whole source (any value it produced, words of its text included), or a place in it. */
export type SourceEntry = string | ResultPlaceDecl;

/** The name a place's sightings carry in the provenance index: `tool://bank/get_transactions#/*\/recipient?sender=me`. */
export function placeName(p: ResultPlaceDecl): string {
  const where = p.where
    ? '?' +
      Object.keys(p.where)
        .sort()
        .map((k) => `${k}=${String(p.where![k])}`)
        .join('&')
    : '';
  return `${p.source}#${p.at}${where}`;
}

export const entryName = (e: SourceEntry): string => (typeof e === 'string' ? e : placeName(e));
export const sourceOf = (e: SourceEntry): string => (typeof e === 'string' ? e : e.source);

/** A place the provenance index records whole values of when its source's result arrives. */
export interface ResultPlace {
  /** The source name its sightings carry. */
  name: string;
  at: string;
  where?: Readonly<Record<string, string | number | boolean>>;
  /** The principal's own records (`principal_records`): they vouch even for a call untrusted text steered. */
  records?: true;
}

const matches = (actual: unknown, wanted: string | number | boolean): boolean =>
  typeof wanted === 'boolean'
    ? actual === wanted
    : (typeof actual === 'string' || typeof actual === 'number') && foldText(actual) === foldText(wanted);

/** The whole scalar values (strings and numbers) at a place in a result. */
export function valuesAt(result: unknown, place: Pick<ResultPlace, 'at' | 'where'>): (string | number)[] {
  const out: (string | number)[] = [];
  const walk = (node: unknown, tokens: readonly string[], parent: unknown): void => {
    if (tokens.length === 0) {
      if (typeof node !== 'string' && typeof node !== 'number') {
        // A list at the place (`/to` holding several recipients): each of its scalars is a whole value there.
        if (Array.isArray(node)) for (const x of node) if (typeof x === 'string' || typeof x === 'number') out.push(x);
        return;
      }
      if (place.where) {
        if (parent === null || typeof parent !== 'object' || Array.isArray(parent)) return;
        const siblings = parent as Record<string, unknown>;
        for (const k of Object.keys(place.where)) if (!matches(siblings[k], place.where[k]!)) return;
      }
      out.push(node);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const [head, ...rest] = tokens as [string, ...string[]];
    const o = node as Record<string, unknown>;
    if (head === '*') {
      for (const k of Object.keys(o)) walk(o[k], rest, node);
    } else if (Object.prototype.hasOwnProperty.call(o, head)) walk(o[head], rest, node);
  };
  walk(result, pointerTokens(place.at), undefined);
  return out;
}
