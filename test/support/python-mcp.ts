// The Python MCP SDK (`mcp` on PyPI) for the gateway's client tests: installed by pip into a venv cached
// outside the clone (beside the Temporal CLI's), so later runs on the machine reuse it. The venv is built
// under a partial name and renamed when pip succeeded, so a broken install is never taken as the cache.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { cacheRoot } from '../../scripts/temporal-cli';

/** The Python SDK release the tests play. */
export const PYTHON_MCP_VERSION = '2.3.0';

function python3(): string {
  for (const p of ['python3', 'python']) if (spawnSync(p, ['--version']).status === 0) return p;
  throw new Error('no python3 on PATH: the Python MCP client tests need one (with venv and pip)');
}

/** The venv's python with `mcp==PYTHON_MCP_VERSION` installed, installing it on first use. */
export function pythonWithMcp(): string {
  const dir = path.join(cacheRoot(), `python-mcp-${PYTHON_MCP_VERSION}`);
  const bin = path.join(dir, 'bin', 'python');
  const ready = (py: string) =>
    spawnSync(py, ['-c', `import mcp, importlib.metadata as m; assert m.version("mcp") == "${PYTHON_MCP_VERSION}"`])
      .status === 0;
  if (fs.existsSync(bin) && ready(bin)) return bin;
  const partial = `${dir}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  const run = (cmd: string, args: string[]) => {
    const r = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr.trim().slice(-2000)}`);
  };
  run(python3(), ['-m', 'venv', partial]);
  run(path.join(partial, 'bin', 'python'), [
    '-m',
    'pip',
    'install',
    '--disable-pip-version-check',
    '--quiet',
    `mcp==${PYTHON_MCP_VERSION}`,
  ]);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(partial, dir); // a venv's python runs from its own folder: the rename keeps it working
  if (!ready(bin)) throw new Error(`the venv at ${dir} does not import mcp ${PYTHON_MCP_VERSION}`);
  return bin;
}
