/**
 * The `default` namespace and toolplane's search attributes (common/search-attributes.ts, so an
 * attribute added there is registered here too), registered through the frontend and then read
 * back: a missing or mistyped attribute is an error naming it, never ignored.
 */
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../../common/search-attributes';
import { ClusterFailed } from './errors';

const { IndexedValueType } = temporal.api.enums.v1;

/** 'KeywordList' → INDEXED_VALUE_TYPE_KEYWORD_LIST. */
export function indexedValueType(cliType: string): temporal.api.enums.v1.IndexedValueType {
  const key = `INDEXED_VALUE_TYPE_${cliType.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()}`;
  const v = (IndexedValueType as unknown as Record<string, number | undefined>)[key];
  if (v === undefined) throw new ClusterFailed('search-attributes', `unknown search attribute type ${cliType}`);
  return v;
}

const GRPC_ALREADY_EXISTS = 6;

function grpcCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

/** Retries `fn` until it succeeds or the deadline passes (services come up in any order). */
async function until<T>(
  what: string,
  step: 'namespace' | 'search-attributes',
  deadline: number,
  fn: () => Promise<T>,
): Promise<T> {
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      return await fn();
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  throw new ClusterFailed(step, `${what} did not succeed in time: ${(last as Error | undefined)?.message ?? last}`);
}

export const SEARCH_ATTRIBUTE_COMMAND = (namespace: string) =>
  `temporal operator search-attribute create --namespace ${namespace} ${SEARCH_ATTRIBUTES.map((a) => `--name ${a.name} --type ${a.cliType}`).join(' ')}`;

export async function setupNamespace(opts: {
  /** The frontend's address, with TLS and an admin token on a secured cluster. */
  connectOptions: Pick<ConnectionOptions, 'address' | 'tls' | 'apiKey'>;
  namespace: string;
  retentionDays?: number;
  timeoutMs?: number;
}): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  const { namespace } = opts;
  const connection = await until('connecting to the frontend', 'namespace', deadline, () =>
    Connection.connect({ ...opts.connectOptions, connectTimeout: 5000 }),
  );
  try {
    await until(`registering namespace ${namespace}`, 'namespace', deadline, async () => {
      try {
        await connection.workflowService.registerNamespace({
          namespace,
          workflowExecutionRetentionPeriod: msToTs(`${opts.retentionDays ?? 3} days`),
        });
      } catch (err) {
        if (grpcCode(err) !== GRPC_ALREADY_EXISTS) throw err;
      }
      await connection.workflowService.describeNamespace({ namespace });
    });

    await registerSearchAttributes(connection, namespace, deadline);

    // Ready means a workflow can be started: history has the namespace too, not only the frontend.
    await until('starting a probe workflow', 'namespace', deadline, async () => {
      const client = new Client({ connection, namespace });
      const handle = await client.workflow.start('toolplaneClusterProbe', {
        taskQueue: 'toolplane-cluster-probe',
        workflowId: `toolplane-cluster-probe-${Date.now()}`,
      });
      await handle.terminate('cluster readiness probe');
    });
  } finally {
    await connection.close();
  }
}

/**
 * Registers the search attributes the namespace lacks and reads them all back: a missing or
 * mistyped one is an error naming it and the command that registers it.
 */
export async function registerSearchAttributes(
  connection: Connection,
  namespace: string,
  deadline: number,
): Promise<void> {
  const wanted = SEARCH_ATTRIBUTES.map((a) => ({
    name: a.name,
    cliType: a.cliType,
    type: indexedValueType(a.cliType),
  }));
  const registered = await until('listing search attributes', 'search-attributes', deadline, async () => {
    const listed = await connection.operatorService.listSearchAttributes({ namespace });
    return listed.customAttributes ?? {};
  });
  const missing = wanted.filter((a) => registered[a.name] === undefined);
  if (missing.length > 0)
    await until('registering search attributes', 'search-attributes', deadline, async () => {
      try {
        await connection.operatorService.addSearchAttributes({
          namespace,
          searchAttributes: Object.fromEntries(missing.map((a) => [a.name, a.type])),
        });
      } catch (err) {
        if (grpcCode(err) !== GRPC_ALREADY_EXISTS) throw err;
      }
    });

  // The check: every attribute present with its type, as the frontend reports it now.
  const problems = await until('reading search attributes back', 'search-attributes', deadline, async () => {
    const now = (await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};
    const wrong = wanted
      .filter((a) => now[a.name] !== a.type)
      .map((a) =>
        now[a.name] === undefined
          ? `${a.name} is not registered`
          : `${a.name} is registered as ${IndexedValueType[now[a.name]!]}, not ${a.cliType}`,
      );
    if (wrong.some((w) => w.endsWith('is not registered'))) throw new Error(wrong.join('; '));
    return wrong;
  }).catch((err: unknown) => [(err as Error).message]);
  if (problems.length > 0)
    throw new ClusterFailed(
      'search-attributes',
      `namespace ${namespace}: ${problems.join('; ')}. Register them with: ${SEARCH_ATTRIBUTE_COMMAND(namespace)}`,
    );
}
