// What the gateway offers a principal: exactly the declared tools the manifest's principals grant it,
// under MCP tool names ([A-Za-z0-9_-], as model APIs accept), with the manifest's description and
// input schema: the pinned declaration, whatever an upstream server says today.
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { mayGrant } from '../catalog/authority';
import { compileSchema, argumentProblems } from '../catalog/schema';
import type { ArgumentProblem } from '../catalog/errors';
import { ToolplaneError } from '../catalog/errors';
import { ErrorCode } from '../catalog/error-codes';
import type { Manifest, ToolDecl } from '../catalog/manifest';
import { offerName } from '../catalog/tool-id';
import type { RunIdentity } from '../common/ticket';

/** One declared tool under its MCP name. */
export interface OfferedTool {
  name: string;
  decl: ToolDecl;
}

/** The manifest's tools by MCP name; two tools that would share a name refuse the gateway at start. */
export function toolsByName(manifest: Manifest): Map<string, OfferedTool> {
  const byName = new Map<string, OfferedTool>();
  for (const decl of manifest.tools) {
    const name = offerName(decl.id);
    const other = byName.get(name);
    if (other)
      throw new ToolplaneError(
        ErrorCode.UsageError,
        `the gateway cannot offer both ${other.decl.id} and ${decl.id}: both are named ${name} in MCP`,
      );
    byName.set(name, { name, decl });
  }
  return byName;
}

/** The tools this identity may be granted, in manifest order. */
export function offeredTo(manifest: Manifest, tools: Map<string, OfferedTool>, who: RunIdentity): OfferedTool[] {
  return [...tools.values()].filter((t) => mayGrant(manifest.principals, who, t.decl.id));
}

/** The MCP listing of one tool. */
export function listing(t: OfferedTool): McpTool {
  const title = t.decl.annotations?.title;
  return {
    name: t.name,
    ...(typeof title === 'string' ? { title } : {}),
    description: t.decl.description,
    inputSchema: t.decl.input_schema as McpTool['inputSchema'],
    annotations: {
      readOnlyHint: t.decl.safety === 'read_only',
      destructiveHint: t.decl.safety === 'mutating',
      idempotentHint: t.decl.safety !== 'mutating',
      openWorldHint: true,
    },
    _meta: { 'toolplane/toolId': t.decl.id },
  };
}

/** The arguments' problems against the tool's declared input schema (none when they conform). */
export function schemaViolations(t: OfferedTool): (args: unknown) => ArgumentProblem[] {
  const validate = compileSchema(t.decl.input_schema);
  return (args) => argumentProblems(validate, args);
}
