// Worker logs at ERROR: expected activity failures would bury what the tests print.
import { DefaultLogger, Runtime } from '@temporalio/worker';

try {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
} catch {
  // Installed already in this process.
}
