// A cluster test's own multi-service Temporal cluster on PostgreSQL, in a temporary folder.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startCluster, type Cluster } from '../../scripts/cluster/index';
import { writeWorkflowBundle } from '../../scripts/workflow-bundle';

export interface TestCluster {
  cluster: Cluster;
  dir: string;
  workflowBundle: string;
  close(): Promise<void>;
}

/**
 * Secured unless `insecure`: the handle's `connectOptions(role)` and `env(role)` carry the TLS files and
 * the role's token (scripts/cluster/credentials.ts).
 */
export async function startTestCluster(
  name: string,
  opts: { ui?: boolean; insecure?: boolean } = {},
): Promise<TestCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `toolplane-${name}-`));
  fs.chmodSync(dir, 0o755); // PostgreSQL runs as its own user when the tests run as root
  const cluster = await startCluster({
    dataDir: path.join(dir, 'cluster'),
    ui: opts.ui ?? false,
    insecure: opts.insecure,
    log: () => {},
  });
  try {
    // With the tracing interceptors, as every toolplane bundle: cluster workers emit workflow spans too.
    const workflowBundle = path.join(dir, 'workflow-bundle.js');
    await writeWorkflowBundle(workflowBundle, undefined, { sources: false });
    return {
      cluster,
      dir,
      workflowBundle,
      async close() {
        await cluster.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}
