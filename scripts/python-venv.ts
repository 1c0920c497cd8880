// A Python package pinned in a venv cached outside the clone (beside the Temporal CLI's), made on first use:
// the AgentDojo harness's `agentdojo` and the gateway tests' `mcp` client. The venv is built under a partial
// name and renamed once pip succeeded, so a broken install is never taken as the cache.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { cacheRoot } from './temporal-cli';

/** What a cached venv holds: one PyPI distribution at one version, and the module that proves it imports. */
export interface PinnedPackage {
  distribution: string;
  version: string;
  module: string;
  /** The cache folder's name before `-<version>` (default the distribution's). */
  cacheName?: string;
}

/** Why the venv could not be had: the step that failed and what it printed. */
export class PythonVenvUnavailable extends Error {
  constructor(
    readonly step: string,
    why: string,
  ) {
    super(`${step}: ${why}`);
    this.name = 'PythonVenvUnavailable';
  }
}

/** A python3 of 3.10 or newer with venv on PATH (or `$DOJO_PYTHON`), or undefined. */
export function findPython3(): string | undefined {
  for (const p of [process.env.DOJO_PYTHON, 'python3', 'python'].filter((x): x is string => !!x)) {
    const r = spawnSync(p, ['-c', 'import sys, venv; print(sys.version_info >= (3, 10))'], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim() === 'True') return p;
  }
  return undefined;
}

/** The venv's python with `pkg` installed, installing it (pip, into a new venv) on first use. */
export function pinnedPython(pkg: PinnedPackage, log: (line: string) => void = () => {}): string {
  const dir = path.join(cacheRoot(), `${pkg.cacheName ?? pkg.distribution}-${pkg.version}`);
  const bin = path.join(dir, 'bin', 'python');
  const ready = (py: string) =>
    spawnSync(py, [
      '-c',
      `import ${pkg.module}, importlib.metadata as m; assert m.version("${pkg.distribution}") == "${pkg.version}"`,
    ]).status === 0;
  if (fs.existsSync(bin) && ready(bin)) return bin;
  const python = findPython3();
  if (!python)
    throw new PythonVenvUnavailable('python', 'no python3 (3.10 or newer, with venv) on PATH; set DOJO_PYTHON');
  log(`installing ${pkg.distribution} ${pkg.version} into ${dir} (once; later runs reuse it)`);
  const partial = `${dir}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  const run = (cmd: string, args: string[]) => {
    const r = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    if (r.status !== 0)
      throw new PythonVenvUnavailable(
        `${cmd} ${args.join(' ')}`,
        `exited ${r.status}: ${r.stderr.trim().slice(-2000)}`,
      );
  };
  try {
    run(python, ['-m', 'venv', partial]);
    run(path.join(partial, 'bin', 'python'), [
      '-m',
      'pip',
      'install',
      '--disable-pip-version-check',
      '--quiet',
      `${pkg.distribution}==${pkg.version}`,
    ]);
  } catch (err) {
    fs.rmSync(partial, { recursive: true, force: true });
    throw err;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(partial, dir); // a venv's python runs from its own folder: the rename keeps it working
  if (!ready(bin)) throw new PythonVenvUnavailable('venv', `${dir} does not import ${pkg.module} ${pkg.version}`);
  return bin;
}
