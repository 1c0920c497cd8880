// Workflow-safe: a tool's declaration without what the manifest's defaults would fill in, and back.
// The worker's answer to a run carries the granted tools this way; the run restores them whole, so
// their digests (and every decision) are those of the worker's parsed declarations.
import { canonicalJson } from './digest';
import { ToolDecl } from './tool-decl';

/** A declaration as the worker's answer carries it: a field equal to its default may be left out. */
export type SentToolDecl = Pick<ToolDecl, 'id' | 'description' | 'input_schema' | 'safety' | 'recovery'> &
  Partial<ToolDecl>;

/** What parsing fills in for a field a manifest leaves out, as canonical JSON (read once). */
let defaults: ReadonlyMap<string, string> | undefined;
function defaultsOf(): ReadonlyMap<string, string> {
  if (defaults) return defaults;
  const bare = { id: 'tool://x/y', description: 'x', input_schema: {}, safety: 'read_only', recovery: 'retry' };
  const parsed: Record<string, unknown> = ToolDecl.parse(bare);
  return (defaults = new Map(
    Object.keys(parsed)
      .filter((k) => !(k in bare))
      .map((k) => [k, canonicalJson(parsed[k])]),
  ));
}

/** The declaration without the fields whose value is their default. */
export function withoutDefaults(decl: ToolDecl): SentToolDecl {
  const d = defaultsOf();
  return Object.fromEntries(
    Object.entries(decl).filter(([k, v]) => v !== undefined && d.get(k) !== canonicalJson(v)),
  ) as SentToolDecl;
}

/** The declaration whole again: every left-out field takes its default (a whole declaration is returned as sent). */
export function withDefaults(sent: SentToolDecl): ToolDecl {
  const filled: Record<string, unknown> = {};
  for (const [k, json] of defaultsOf()) if (!(k in sent)) filled[k] = JSON.parse(json) as unknown;
  return { ...filled, ...sent } as ToolDecl;
}
