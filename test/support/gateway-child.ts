// A process that runs only the HTTP half of the gateway (createGateway), beside workers that run elsewhere:
// for the fault tests, which SIGKILL it. Configured by its environment; says "[gateway] MCP endpoint" when it listens.
import fs from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { createGateway } from '../../gateway/gateway';
import { loadIdentityFile } from '../../activities/identity/identity-file';
import { loadManifest } from '../../runtime/manifest-file';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`gateway-child: ${name} is not set`);
  return value;
}

async function main(): Promise<void> {
  const connection = await Connection.connect({ address: required('TOOLPLANE_TEST_ADDRESS') });
  const gateway = await createGateway({
    client: new Client({ connection }),
    taskQueue: required('GATEWAY_TASK_QUEUE'),
    manifest: loadManifest(required('GATEWAY_MANIFEST')).manifest,
    identity: loadIdentityFile(required('GATEWAY_IDENTITY')),
    ticketKey: required('TOOLPLANE_TICKET_KEY'),
    port: Number(required('GATEWAY_PORT')),
    resource: required('GATEWAY_RESOURCE'),
  });
  fs.writeSync(2, `[gateway] MCP endpoint ${gateway.url} (pid ${process.pid})\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
