// Workflow-safe: the digest of a tool's definition as its source describes it, so a server's
// listing can be compared with the manifest's declaration (a changed definition is a "rug pull").
import { digestOf } from './digest';
import type { ToolDecl } from './manifest';
import { nameOf } from './tool-id';

export interface SourceDefinition {
  name: string;
  description?: string;
  inputSchema: unknown;
  annotations?: unknown;
}

export function definitionDigest(def: SourceDefinition): string {
  return digestOf({
    name: def.name,
    description: def.description ?? '',
    inputSchema: def.inputSchema,
    annotations: def.annotations ?? {},
  });
}

export function declaredDefinition(decl: ToolDecl): SourceDefinition {
  return {
    name: nameOf(decl.id),
    description: decl.description,
    inputSchema: decl.input_schema,
    annotations: decl.annotations ?? {},
  };
}
