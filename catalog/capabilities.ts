// Workflow-safe: capabilities a run may hold, granted by whoever starts it.

/** Lets a run's authorised calls start the extension that owns an `ext:` tool. */
export const EXTENSION_RUNTIME = 'extension-runtime';
