// Worker logs at ERROR: expected activity failures would bury what the tests print. And the
// environment every worker of a test file shares, in-process or spawned.
import { randomBytes } from 'node:crypto';
import { DefaultLogger, Runtime } from '@temporalio/worker';

// One ticket key for every worker of a test file, in-process or spawned with data directories of their
// own (replicas "on different machines"), as a deployment shares it through TOOLPLANE_TICKET_KEY.
process.env.TOOLPLANE_TICKET_KEY ??= randomBytes(32).toString('base64url');
// Spawned `toolplane worker`s take principals on their word, as the in-process harness's do; the
// identity suites configure issuers on workers of their own.
process.env.TOOLPLANE_INSECURE_ASSERTED_PRINCIPALS ??= '1';

try {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
} catch {
  // Installed already in this process.
}

// Node 20 puts `Symbol.asyncDispose` on its own realm's Symbol only; jest's test context has a fresh
// Symbol without it, and @temporalio/workflow-streams' clients (`await using`) need it.
if ((Symbol as { asyncDispose?: symbol }).asyncDispose === undefined)
  Object.defineProperty(Symbol, 'asyncDispose', { value: Symbol.for('nodejs.asyncDispose') });
