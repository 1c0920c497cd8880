// A real `toolplane worker` process on the suite's dev server, started from the suite's workflow bundle.
import { spawnWorker, type SpawnOptions, type WorkerProcess } from '../../scripts/worker-process';
import { testAddress } from './env';

export function spawnTestWorker(opts: Omit<SpawnOptions, 'address' | 'workflowBundle'>): WorkerProcess {
  return spawnWorker({ ...opts, address: testAddress(), workflowBundle: process.env.TOOLPLANE_TEST_BUNDLE });
}
