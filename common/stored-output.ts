// Workflow-safe, shared by the tool activity, the workflow and the model activity: an output kept
// outside history. Only the tool activity creates one, and only in `PerformResult.stored`, a field
// a tool's own output cannot reach; so a result that merely looks like a reference stays data.

export interface StoredOutput {
  /** `sha256:<hex>` of the JSON text. */
  ref: string;
  /** The workflow id of the run that stored it; blobs are read only by that run. */
  scope: string;
  bytes: number;
  mediaType: 'application/json';
  /** The first characters, so a reader of the history sees what it is. */
  preview: string;
}

/** Blobs a delegated child stores belong to its parent run too. */
export function scopeReadableBy(scope: string, workflowId: string): boolean {
  return scope === workflowId || scope.startsWith(`${workflowId}/delegated-`);
}

const STORED = Symbol.for('toolplane.StoredOutput');

/** What `callTool` returns for a stored output. The brand is a symbol, which no JSON can carry. */
export type StoredHandle = StoredOutput & { readonly [STORED]: true };

export function storedHandle(stored: StoredOutput): StoredHandle {
  return { ...stored, [STORED]: true };
}

export function isStoredHandle(value: unknown): value is StoredHandle {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[STORED] === true;
}

/** The envelope alone, for a model message. */
export function storedOf(handle: StoredHandle): StoredOutput {
  return {
    ref: handle.ref,
    scope: handle.scope,
    bytes: handle.bytes,
    mediaType: handle.mediaType,
    preview: handle.preview,
  };
}
