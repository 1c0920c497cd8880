// Workflow-safe: one spelling per destination (an address, an account), so a retyped one is the same.
import { foldText } from './fold';

/** NFKC, then lower case, without whitespace: "  DE89 3704 …" and "de893704…" are one payee. */
export function normaliseDestination(value: string | number): string {
  return foldText(value);
}
