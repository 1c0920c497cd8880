/**
 * Finds the Chromium the browser test drives, installing Debian's package when it is missing and
 * this process may (root, with apt-get): a fresh machine's `npm test` obtains what it needs itself.
 *
 * Routes, in order: TOOLPLANE_CHROMIUM, /usr/bin/chromium, `apt-get install chromium`.
 */
import fs from 'node:fs';
import { onPath, runShown, ToolUnobtainable } from './temporal-cli';

type Log = (line: string) => void;

export const DEBIAN_CHROMIUM = '/usr/bin/chromium';

export class ChromiumUnavailable extends ToolUnobtainable<'ChromiumUnavailable'> {
  constructor(attempts: string[]) {
    super('ChromiumUnavailable', 'Could not find or install Chromium for the browser test. Tried:', attempts, [
      "Install Debian's chromium (apt-get install -y chromium) or point TOOLPLANE_CHROMIUM at a Chromium binary.",
    ]);
  }
}

export async function findChromium(log: Log = (l) => process.stderr.write(`[chromium] ${l}\n`)): Promise<string> {
  const attempts: string[] = [];
  const given = process.env.TOOLPLANE_CHROMIUM;
  if (given) {
    if (fs.existsSync(given)) return given;
    attempts.push(`TOOLPLANE_CHROMIUM=${given}: no such file`);
  }
  if (fs.existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  attempts.push(`${DEBIAN_CHROMIUM}: not installed`);
  const aptGet = onPath('apt-get');
  if (!aptGet || process.getuid?.() !== 0) {
    attempts.push(aptGet ? 'apt-get: not root, so nothing is installed' : 'apt-get: not on PATH');
    throw new ChromiumUnavailable(attempts);
  }
  log("installing Debian's chromium (apt-get update && apt-get install -y chromium); this takes a minute or two");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const updated = await runShown(aptGet, ['update', '-qq'], env, log, 'updating the package lists');
  const installed =
    updated === 0
      ? await runShown(aptGet, ['install', '-y', '-qq', 'chromium'], env, log, 'installing chromium')
      : updated;
  if (installed === 0 && fs.existsSync(DEBIAN_CHROMIUM)) {
    log(`installed ${DEBIAN_CHROMIUM}`);
    return DEBIAN_CHROMIUM;
  }
  attempts.push(`apt-get install chromium: exit ${installed}`);
  throw new ChromiumUnavailable(attempts);
}
