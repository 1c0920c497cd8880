/**
 * The main and visibility schemas, set up with temporal-sql-tool from the server module's own
 * schema files (schema/postgresql/v12/{temporal,visibility}/versioned). A new database cluster gets
 * `create-database` and `setup-schema -v 0.0`; every start runs `update-schema`, which applies only
 * the versions a database lacks.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ClusterFailed } from './errors';
import { PG_PASSWORD, PG_USER } from './postgres';

export const DATABASES = [
  { db: 'temporal', schema: 'temporal' },
  { db: 'temporal_visibility', schema: 'visibility' },
] as const;

export function setupSchemas(opts: {
  sqlTool: string;
  serverModuleDir: string;
  port: number;
  fresh: boolean;
  logFile: string;
}): void {
  const base = [
    '--plugin',
    'postgres12',
    '--ep',
    '127.0.0.1',
    '-p',
    String(opts.port),
    '-u',
    PG_USER,
    '--pw',
    PG_PASSWORD,
  ];
  const run = (db: string, args: string[]) => {
    const r = spawnSync(opts.sqlTool, [...base, '--db', db, ...args], { encoding: 'utf8', timeout: 120_000 });
    fs.appendFileSync(opts.logFile, `$ sql --db ${db} ${args.join(' ')}\n${r.stdout}${r.stderr}\n`);
    if (r.status !== 0)
      throw new ClusterFailed(
        'schema',
        `temporal-sql-tool --db ${db} ${args.join(' ')} exited with ${r.status}: ${(r.stderr || r.stdout).trim().split('\n').slice(-5).join('\n')}`,
        opts.logFile,
      );
  };
  for (const { db, schema } of DATABASES) {
    const versioned = path.join(opts.serverModuleDir, 'schema', 'postgresql', 'v12', schema, 'versioned');
    if (!fs.existsSync(versioned))
      throw new ClusterFailed('schema', `the server module has no schema folder ${versioned}`);
    if (opts.fresh) {
      run(db, ['create-database']);
      run(db, ['setup-schema', '-v', '0.0']);
    }
    run(db, ['update-schema', '-d', versioned]);
  }
}
