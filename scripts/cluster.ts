/**
 * `npm run cluster`: a real multi-service Temporal cluster on this machine, without Docker
 * (PostgreSQL, frontend, history, matching and worker services, the Web UI), until Ctrl-C or
 * SIGTERM tears it down. Data stays in `.data/cluster/` (TOOLPLANE_DATA_DIR), so the next start is warm.
 * Secured by default (mutual TLS, tokens, toolplane's authorizer: scripts/cluster/credentials.ts);
 * `--insecure` runs it open.
 *
 *   npm run cluster [-- --port 7233] [--ui-port 8080] [--fresh] [--prepare] [--insecure]
 *   npm run cluster -- --credentials-only --credentials-dir <dir> [--address temporal-frontend:7233]
 *     (only the CA, certificates, JWKS and tokens, e.g. for docker-compose.yml)
 */
import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { defaultDataDir } from './dev-server';
import { startCluster, type Cluster } from './cluster/index';
import { ensureCredentials, ROLES, type Role } from './cluster/credentials';
import { stopAllProcesses } from './cluster/process';
import { ensureClusterBinaries } from './cluster/binaries';
import { ensurePostgres } from './cluster/postgres';
import { SEARCH_ATTRIBUTES } from '../common/search-attributes';

async function main(): Promise<void> {
  const o = new Command('cluster')
    .description('Run a multi-service Temporal cluster on PostgreSQL until Ctrl-C')
    .option('--port <n>', 'the frontend port (TEMPORAL_ADDRESS); default: a free port', (v) => Number(v))
    .option('--ui-port <n>', 'the Web UI port; default: a free port', (v) => Number(v))
    .option('--data-dir <dir>', 'where the database and logs live', path.join(defaultDataDir(), 'cluster'))
    .option('--fresh', 'delete the data folder first (a cold start)')
    .option('--insecure', 'run the cluster open: no TLS, no tokens, every caller may do everything')
    .option(
      '--credentials-dir <dir>',
      'where the CA, certificates, JWKS and tokens are kept (default: <data-dir>/credentials)',
    )
    .option(
      '--credentials-only',
      'only make (or keep) the credentials in --credentials-dir and mint tokens, then exit (for docker-compose.yml)',
    )
    .option(
      '--address <host:port>',
      'with --credentials-only: the frontend address the role files name',
      'localhost:7233',
    )
    .option('--namespace <ns>', 'the namespace the tokens are for', 'default')
    .option(
      '--prepare',
      'only make sure the binaries and PostgreSQL are there (building or installing them), then exit',
    )
    .parse(process.argv)
    .opts<{
      port?: number;
      uiPort?: number;
      dataDir: string;
      fresh?: boolean;
      prepare?: boolean;
      insecure?: boolean;
      credentialsDir?: string;
      credentialsOnly?: boolean;
      address: string;
      namespace: string;
    }>();
  if (o.credentialsOnly) {
    const dir = path.resolve(o.credentialsDir ?? path.join(o.dataDir, 'credentials'));
    const creds = ensureCredentials(dir, {
      namespace: o.namespace,
      address: o.address,
      log: (l) => console.error(`[cluster] ${l}`),
    });
    console.log(
      `credentials in ${creds.dir}: ca.pem, server/ui/client certificates, jwks.json, and per role (${Object.keys(ROLES).join(', ')}) <role>.jwt, <role>.env, temporal.toml`,
    );
    return;
  }
  if (o.prepare) {
    const log = (l: string) => console.error(`[cluster] ${l}`);
    const bins = await ensureClusterBinaries(log);
    const pg = ensurePostgres(log);
    console.log(
      `temporal-server ${bins.server}\nsql tool ${bins.sqlTool}\nui-server ${bins.uiServer}\nPostgreSQL ${pg}`,
    );
    return;
  }
  if (o.fresh) fs.rmSync(o.dataDir, { recursive: true, force: true });

  const started: { cluster?: Cluster } = {};
  let stopping: Promise<void> | undefined;
  const stop = (signal: string) => {
    stopping ??= (async () => {
      console.error(`[cluster] ${signal}: stopping the Web UI, the services, then PostgreSQL`);
      // While still starting, whatever has started so far.
      await (started.cluster ? started.cluster.stop() : stopAllProcesses());
      console.error('[cluster] stopped');
      process.exit(signal === 'SIGINT' ? 130 : 143);
    })();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGHUP', () => stop('SIGHUP'));

  const cluster = (started.cluster = await startCluster({
    namespace: o.namespace,
    dataDir: o.dataDir,
    frontendPort: o.port,
    uiPort: o.uiPort,
    insecure: o.insecure,
    credentialsDir: o.credentialsDir,
  }));
  const creds = cluster.credentials;
  const roleLine = (role: Role, what: string) =>
    `    ${role.padEnd(8)} ${what}: set -a; . ${creds!.dir}/${role}.env; set +a`;

  console.log(
    [
      '',
      `Temporal cluster ready in ${(cluster.startMs / 1000).toFixed(1)}s (${cluster.cold ? 'cold: new database' : 'warm'})`,
      `  export TEMPORAL_ADDRESS=${cluster.address}`,
      `  export TEMPORAL_UI_URL=${cluster.uiUrl}`,
      `  Web UI: ${cluster.uiUrl}${creds ? ' (read-only: it holds the UI certificate, which may only read)' : ''}`,
      `  namespace ${cluster.namespace}; search attributes ${SEARCH_ATTRIBUTES.map((a) => a.name).join(', ')}`,
      `  processes: ${cluster.processes().join(', ')}; logs in ${cluster.logDir}`,
      ...(creds
        ? [
            `Secured: mutual TLS (CA ${creds.ca}), tokens verified against ${creds.jwks}. One credential per party`,
            `(client certificate, CA and token as TEMPORAL_TLS_CERT/_KEY/_CA and TEMPORAL_API_KEY):`,
            roleLine('starter', `start, signal, update, query runs (${ROLES.starter(cluster.namespace).join(', ')})`),
            roleLine(
              'operator',
              `also list, describe, cancel, reset (${ROLES.operator(cluster.namespace).join(', ')})`,
            ),
            roleLine('worker', `poll and answer task queues (${ROLES.worker(cluster.namespace).join(', ')})`),
            `  or as envconfig profiles: TEMPORAL_CONFIG_FILE=${creds.dir}/temporal.toml TEMPORAL_PROFILE=<role>`,
            'Then, in another terminal, the demo (it runs a worker and starts runs, so both tokens):',
            `  set -a; . ${creds.dir}/starter.env; set +a; TOOLPLANE_WORKER_API_KEY=$(cat ${creds.dir}/worker.jwt) npm start`,
          ]
        : ['Open (--insecure): no TLS, no tokens. Then, in another terminal: TEMPORAL_ADDRESS=... npm start.']),
      'Ctrl-C stops the cluster.',
      '',
    ].join('\n'),
  );
  // Keep running until a signal arrives.
  setInterval(() => {}, 1 << 30);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
