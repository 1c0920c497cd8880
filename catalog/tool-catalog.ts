// Workflow-safe: the reach of one run, derived from the manifest rather than restated.
import { digestOf, toolDigest } from './digest';
import type { Manifest, ToolDecl } from './manifest';
import { canUseTool, type Policy } from './policy';
import { placeName, type ResultPlace } from './result-place';
import { offerName } from './tool-id';

export interface CatalogEntry {
  readonly decl: ToolDecl;
  /** The declaration's digest, hashed when first read: most runs never read it. */
  readonly digest: string;
  readonly granted: boolean;
}

/** An entry whose digest is hashed on first read: hashing every declaration cost each run's start a millisecond. */
class Entry implements CatalogEntry {
  private hashed: string | undefined;
  constructor(
    readonly decl: ToolDecl,
    readonly granted: boolean,
  ) {}
  get digest(): string {
    return (this.hashed ??= toolDigest(this.decl));
  }
}

/** What a model is shown: a tool it may call, under a name its API accepts. */
export interface OfferedTool {
  toolId: string;
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** What a run's model turns name in place of the offered tools' schemas, once the first turn sent them. */
export function offeredDigest(tools: readonly OfferedTool[]): string {
  return digestOf(tools);
}

export class ToolCatalog {
  private constructor(
    private readonly entries: ReadonlyMap<string, CatalogEntry>,
    /** Declared, not granted, and not sent to this run: known by identity only. */
    private readonly withheld: ReadonlySet<string> = new Set(),
  ) {}

  /**
   * The only way to build a catalogue: every entry is the manifest's own declaration, so a
   * catalogue cannot be laxer than the manifest. Grants name exact identities.
   */
  static fromManifest(manifest: Manifest, grants: readonly string[]): ToolCatalog {
    const granted = new Set(grants);
    const entries = new Map<string, Entry>();
    for (const decl of manifest.tools) entries.set(decl.id, new Entry(decl, granted.has(decl.id)));
    return new ToolCatalog(entries);
  }

  /**
   * The catalogue of a run the worker authorized: the granted tools' declarations as the worker
   * sent them, and the identities of the others it declares (refused as ungranted, not unknown).
   */
  static fromGranted(tools: readonly ToolDecl[], declared: readonly string[]): ToolCatalog {
    const entries = new Map<string, Entry>();
    for (const decl of tools) entries.set(decl.id, new Entry(decl, true));
    return new ToolCatalog(entries, new Set(declared.filter((id) => !entries.has(id))));
  }

  private readonly places = new Map<string, readonly ResultPlace[]>();

  /**
   * The places in `source`'s results whose whole values the run's provenance records: those the field
   * rules name, and the tool's own `principal_records` (under the tool's own name).
   */
  placesOf(source: string): readonly ResultPlace[] {
    let found = this.places.get(source);
    if (found) return found;
    const records = this.entries.get(source)?.decl.principal_records ?? [];
    const byName = new Map<string, ResultPlace>();
    for (const at of records) byName.set(`${source}\u0000${at}`, { name: source, at, records: true });
    for (const e of this.entries.values())
      for (const rule of e.decl.protected_fields) {
        if (!('from_sources' in rule)) continue;
        for (const entry of rule.from_sources) {
          if (typeof entry === 'string' || entry.source !== source) continue;
          const name = placeName(entry);
          if (byName.has(name)) continue;
          byName.set(name, {
            name,
            at: entry.at,
            ...(entry.where ? { where: entry.where } : {}),
            ...(records.includes(entry.at) ? { records: true as const } : {}),
          });
        }
      }
    found = Object.freeze([...byName.values()]);
    this.places.set(source, found);
    return found;
  }

  /** Declared, whether granted or not. */
  declared(toolId: string): CatalogEntry | undefined {
    return this.entries.get(toolId);
  }

  /** Declared by the manifest, whether or not this catalogue holds its declaration. */
  isDeclared(toolId: string): boolean {
    return this.entries.has(toolId) || this.withheld.has(toolId);
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
