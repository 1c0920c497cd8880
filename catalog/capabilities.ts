// Workflow-safe: capabilities a run may hold. A run asks for them; the manifest's `principals`
// section says who may hold which.

/** Lets a run's authorised calls start the extension that owns an `ext:` tool. */
export const EXTENSION_RUNTIME = 'extension-runtime';

export const KNOWN_CAPABILITIES: readonly string[] = [EXTENSION_RUNTIME];
