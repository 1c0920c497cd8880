// The identity a suite function has in the harness's manifests (gen_manifest.py names the server `dojo`).

/** `send_money` → `tool://dojo/send_money`. */
export const dojoToolId = (fn: string): string => `tool://dojo/${fn}`;
