// Worker logs at WARN, so the test output shows what the tests print.
import { DefaultLogger, Runtime } from '@temporalio/worker';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // Installed already in this process.
}
