/**
 * The local model endpoint as a process of its own: loads the GGUF, serves Chat Completions on
 * 127.0.0.1, and prints one line, `listening <base URL>`, once it answers. Stops on SIGTERM or
 * when its parent closes its stdin.
 *
 *   node --import tsx examples/local-model/serve.ts --model <file.gguf> [--port 0] [--threads 1]
 *
 * A process of its own because node-llama-cpp is an ES module with a native addon: the example and
 * the test (a CommonJS jest) start it the same way, and its memory is its own.
 */
import { LocalChatModel } from './chat-model';
import { startChatServer } from './chat-server';
import { MODEL_PACKAGE } from './model-package';

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const modelPath = flag('model');
  if (!modelPath) throw new Error('--model <file.gguf> is required');
  const model = await LocalChatModel.load(modelPath, {
    threads: Number(flag('threads') ?? process.env.TOOLPLANE_LOCAL_MODEL_THREADS ?? 1),
  });
  const server = await startChatServer(model, flag('model-id') ?? MODEL_PACKAGE.modelId, Number(flag('port') ?? 0));
  const stop = async () => {
    await server.close();
    await model.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  process.stdin.on('end', () => void stop());
  process.stdin.resume();
  console.log(`listening ${server.baseUrl}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
