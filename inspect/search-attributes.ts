/**
 * Toolplane's search attributes must be registered on the namespace before a run starts: a run that
 * upserts an unregistered one fails its workflow task after its effects landed, and stays stuck. Checked
 * when a worker starts and before a client starts its first run, with the command that registers them.
 */
import type { temporal } from '@temporalio/proto';
import { ToolplaneError } from '../catalog/errors';
import { SEARCH_ATTRIBUTES } from '../common/search-attributes';
import { ErrorCode } from '../catalog/error-codes';

type IndexedValueType = temporal.api.enums.v1.IndexedValueType;

/** What both a client `Connection` and a worker `NativeConnection` offer. */
export interface SearchAttributeLister {
  listSearchAttributes(req: { namespace: string }): Promise<{
    customAttributes?: Record<string, IndexedValueType> | null;
  }>;
}

export interface MissingSearchAttribute {
  name: string;
  cliType: string;
}

/** The exact `temporal` CLI command that registers `missing` on `namespace`. */
export function searchAttributeCommand(namespace: string, missing: readonly MissingSearchAttribute[]): string {
  return (
    `temporal operator search-attribute create --namespace ${namespace} ` +
    missing.map((a) => `--name ${a.name} --type ${a.cliType}`).join(' ')
  );
}

export class SearchAttributesMissing extends ToolplaneError<
  typeof ErrorCode.SearchAttributesMissing,
  { namespace: string; missing: MissingSearchAttribute[]; command: string }
> {
  constructor(namespace: string, missing: MissingSearchAttribute[]) {
    const command = searchAttributeCommand(namespace, missing);
    super(
      ErrorCode.SearchAttributesMissing,
      `namespace ${namespace} lacks toolplane's search attributes ${missing.map((a) => a.name).join(', ')}; ` +
        `runs would get stuck after their effects landed. Register them (with the server's address) with:\n  ${command}`,
      { namespace, missing, command },
    );
  }
}

/** Throws `SearchAttributesMissing` naming every attribute the namespace lacks and the command that adds them. */
export async function checkSearchAttributes(service: SearchAttributeLister, namespace: string): Promise<void> {
  const registered = (await service.listSearchAttributes({ namespace })).customAttributes ?? {};
  const missing = SEARCH_ATTRIBUTES.filter((a) => registered[a.name] === undefined).map((a) => ({
    name: a.name,
    cliType: a.cliType,
  }));
  if (missing.length > 0) throw new SearchAttributesMissing(namespace, missing);
}
