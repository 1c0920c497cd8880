// Starts the local model endpoint (serve.ts) as a child process and declares it to a manifest: the
// worker reaches it as any `openai-compatible` model endpoint, by the URL its manifest names.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { ToolplaneError } from '../../catalog/errors';
import type { Manifest } from '../../catalog/manifest';
import { MODEL_PACKAGE } from './model-package';

/** The endpoint's name in the manifest's `models`; a run names it. */
export const LOCAL_ENDPOINT = 'local';

export interface LocalEndpoint {
  baseUrl: string;
  stop(): Promise<void>;
}

export class LocalEndpointFailed extends ToolplaneError<'LocalEndpointFailed', { output: string }> {
  constructor(why: string, output: string) {
    super('LocalEndpointFailed', `the local model endpoint did not start: ${why}${output ? `\n${output}` : ''}`, {
      output,
    });
  }
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

/** Starts serve.ts on a free port and resolves once it answers, with its base URL. */
export function startLocalEndpoint(modelPath: string, timeoutMs = 120_000): Promise<LocalEndpoint> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'serve.ts'), '--model', modelPath], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (d: Buffer) => (output = (output + d.toString('utf8')).slice(-4000)));
  const stop = async () => {
    // Closing its stdin stops it; a signal makes sure.
    child.stdin.end();
    child.kill('SIGTERM');
    await exited(child);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new LocalEndpointFailed(`no answer within ${timeoutMs / 1000}s`, output));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new LocalEndpointFailed(`it exited with ${code}`, output));
    });
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /^listening (\S+)$/.exec(line);
      if (!m) return;
      clearTimeout(timer);
      resolve({ baseUrl: m[1]!, stop });
    });
  });
}

/** The manifest with the local endpoint declared beside its own: the worker owns the URL, a run only names `local`. */
export function withLocalModel(manifest: Manifest, baseUrl: string): Manifest {
  return {
    ...manifest,
    models: {
      ...manifest.models,
      [LOCAL_ENDPOINT]: { provider: 'openai-compatible', base_url: baseUrl, models: [MODEL_PACKAGE.modelId] },
    },
  };
}
