// Pure (workflow-safe): words of a command line printed for people to paste into a POSIX shell.

/** A word a POSIX shell reads back as itself. */
export function shellWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}
