// Workflow-safe: the tool-identity grammar, written here once: `tool://server/name` for a declared
// server's tool, `ext:<plugin>:<name>` for an extension's.
import { z } from 'zod';

/** A tool identity as a manifest, a grant or a run's calls write it. */
export const TOOL_ID_PATTERN =
  /^(tool:\/\/[a-z0-9][a-z0-9_.-]*\/[A-Za-z0-9_.-]+|ext:[a-z0-9][a-z0-9_.-]*:[A-Za-z0-9_.-]+)$/;

const TOOL_SCHEME = 'tool://';
const EXTENSION_SCHEME = 'ext:';

/** A tool identity checked against the grammar; `message` says what a wrong one should have been. */
export function toolIdText(message: string): z.ZodString {
  return z.string().regex(TOOL_ID_PATTERN, message);
}

/** Whether the identity names an extension's tool (`ext:<plugin>:<name>`). */
export function isExtensionTool(id: string): boolean {
  return id.startsWith(EXTENSION_SCHEME);
}

/** The server (or extension plugin) an identity names. */
export function serverOf(id: string): string {
  return isExtensionTool(id) ? id.split(':')[1]! : id.slice(TOOL_SCHEME.length).split('/')[0]!;
}

/** The tool's own name within its server. */
export function nameOf(id: string): string {
  return isExtensionTool(id) ? id.split(':').slice(2).join(':') : id.slice(TOOL_SCHEME.length).split('/')[1]!;
}

/** `tool://crm/lookup` → `crm__lookup`: provider APIs restrict tool names to [A-Za-z0-9_-]. */
export function offerName(toolId: string): string {
  const bare = isExtensionTool(toolId)
    ? `ext_${toolId.slice(EXTENSION_SCHEME.length).replace(/:/g, '__')}`
    : toolId.slice(TOOL_SCHEME.length).replace('/', '__');
  return bare.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}
