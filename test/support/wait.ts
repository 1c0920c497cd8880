// Waiting on a condition with a deadline, never on a fixed sleep: a loaded machine only makes it take longer.

/** Polls `check` until it returns true (or a value other than false/undefined); fails naming what never happened. */
export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  check: () => T | false | undefined | Promise<T | false | undefined>,
  intervalMs = 100,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== false && value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > until)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message ?? String(lastError)})` : ''}`,
      );
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
