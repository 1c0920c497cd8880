// Workflow-safe: how Current Details write text: times as people read them, bounded reasons and
// arguments, JSON the Web UI can wrap, inline code that holds any text.

/** `2026-12-01 14:03 UTC`: a deadline as people read it. */
export function readableTime(ms: number): string {
  return `${new Date(ms).toISOString().replace('T', ' ').slice(0, 16)} UTC`;
}

/** How long a refusal's reason, or a waiting call's arguments, may run in Current Details. */
export const REASON_CHARS = 300;
export const ARGS_CHARS = 600;

/** `text`, cut to `max` characters with a note of how much was left out. */
export function bounded(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

/** JSON on one line, spaced after its commas and colons so that the Web UI can wrap it. */
export function spacedJson(value: unknown): string {
  // Newlines inside strings are escaped by JSON.stringify: every newline left is indentation.
  return JSON.stringify(value, null, 1).replace(/\n\s*/g, ' ');
}

/** Markdown inline code that holds any text: fenced by more backticks than it contains. */
export function inlineCode(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}
