// Workflow-safe: what one `from_sources` rule admits, read once per rule: the names its sightings
// carry (sources and places), the tools whose places it names, and whether the principal's words count.
import type { ProtectedFieldDecl } from '../../catalog/manifest';
import { entryName } from '../../catalog/result-place';
import { USER_PROMPT } from './provenance';

export type SourcesRule = Extract<ProtectedFieldDecl, { from_sources: unknown }>;

export interface FieldSources {
  /** Sighting sources that satisfy the rule: source ids and place names. */
  names: readonly string[];
  /** Tools the rule names a place of: their other values are neither allowed nor foreign (the same result). */
  placeTools: ReadonlySet<string>;
  /** `user://prompt` is allowed: spans of the principal's words count. */
  userPrompt: boolean;
}

const cache = new WeakMap<SourcesRule, FieldSources>();

export function sourcesOf(rule: SourcesRule): FieldSources {
  let s = cache.get(rule);
  if (s) return s;
  const names = rule.from_sources.map(entryName);
  const placeTools = new Set<string>();
  for (const e of rule.from_sources) if (typeof e !== 'string' && !names.includes(e.source)) placeTools.add(e.source);
  s = { names, placeTools, userPrompt: names.includes(USER_PROMPT) };
  cache.set(rule, s);
  return s;
}
