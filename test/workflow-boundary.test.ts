// Workflow code stays deterministic: no Node built-ins, no effectful imports, and nothing from the
// worker's side; what crosses the boundary lives in common/wire.ts.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..');
const tsFiles = (dir: string): string[] =>
  fs
    .readdirSync(path.join(root, dir), { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? tsFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
    );
const workflowSafe = [...['workflows', 'catalog', 'common'].flatMap(tsFiles), 'workflow.ts', 'ai-sdk.ts'];
const WORKER_SIDE = /(^|\/)(activities|runtime|inspect|cli|gateway)\//;

describe('the workflow boundary', () => {
  it('covers the workflow-safe folders, their subfolders and the workflow entry points', () => {
    expect(workflowSafe).toEqual(
      expect.arrayContaining(['workflows/call/perform.ts', 'common/wire.ts', 'workflow.ts']),
    );
  });

  it.each(workflowSafe)('%s imports nothing that touches the world', (file) => {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    const imports = [...text.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?from\s+'([^']+)'/gm)].map((m) => m[2]!);
    for (const from of imports) {
      expect({
        file,
        from,
        node: from.startsWith('node:') || ['fs', 'path', 'crypto', 'os', 'child_process'].includes(from),
      }).toMatchObject({ node: false });
      expect({ file, from, workerSide: WORKER_SIDE.test(from) }).toMatchObject({ workerSide: false });
      expect({ file, from, sdk: /^@temporalio\/(activity|worker|client)/.test(from) }).toMatchObject({ sdk: false });
    }
    expect(text).not.toMatch(/Math\.random\(|new Date\(\)|setTimeout\(|process\./);
  });
});
