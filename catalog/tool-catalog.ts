// Workflow-safe: the reach of one run, derived from the manifest rather than restated.
import { toolDigest } from './digest';
import type { Manifest, ToolDecl } from './manifest';
import { canUseTool, type Policy } from './policy';

export interface CatalogEntry {
  decl: ToolDecl;
  digest: string;
  granted: boolean;
}

/** What a model is shown: a tool it may call, under a name its API accepts. */
export interface OfferedTool {
  toolId: string;
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** `tool://crm/lookup` → `crm__lookup`: provider APIs restrict tool names to [A-Za-z0-9_-]. */
export function offerName(toolId: string): string {
  const bare = toolId.startsWith('ext:')
    ? `ext_${toolId.slice(4).replace(/:/g, '__')}`
    : toolId.slice('tool://'.length).replace('/', '__');
  return bare.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

export class ToolCatalog {
  private constructor(private readonly entries: ReadonlyMap<string, CatalogEntry>) {}

  /**
   * The only way to build a catalogue: every entry is the manifest's own declaration, so a
   * catalogue cannot be laxer than the manifest. Grants name exact identities.
   */
  static fromManifest(manifest: Manifest, grants: readonly string[]): ToolCatalog {
    const granted = new Set(grants);
    const entries = new Map<string, CatalogEntry>();
    for (const decl of manifest.tools)
      entries.set(decl.id, { decl, digest: toolDigest(decl), granted: granted.has(decl.id) });
    return new ToolCatalog(entries);
  }

  /** Declared, whether granted or not. */
  declared(toolId: string): CatalogEntry | undefined {
    return this.entries.get(toolId);
  }

  granted(toolId: string): CatalogEntry | undefined {
    const e = this.entries.get(toolId);
    return e?.granted ? e : undefined;
  }

  grantedIds(): string[] {
    return [...this.entries.values()].filter((e) => e.granted).map((e) => e.decl.id);
  }

  offered(policy: Policy): OfferedTool[] {
    return [...this.entries.values()]
      .filter((e) => e.granted && canUseTool(policy, e.decl.id))
      .map((e) => ({
        toolId: e.decl.id,
        name: offerName(e.decl.id),
        description: e.decl.description,
        inputSchema: e.decl.input_schema,
      }));
  }
}
