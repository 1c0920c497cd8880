// Workflow code stays deterministic: no Node built-ins, no effectful imports, activities as types only.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..');
const workflowSafe = ['workflows', 'catalog'].flatMap((d) =>
  fs
    .readdirSync(path.join(root, d))
    .filter((f) => f.endsWith('.ts') && f !== 'manifest-file.ts')
    .map((f) => path.join(d, f)),
);

describe('the workflow boundary', () => {
  it.each(workflowSafe)('%s imports nothing that touches the world', (file) => {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    const imports = [...text.matchAll(/^import\s+(type\s+)?[^;]*?from\s+'([^']+)'/gm)].map((m) => ({
      typeOnly: !!m[1],
      from: m[2]!,
    }));
    for (const i of imports) {
      expect({
        file,
        from: i.from,
        node: i.from.startsWith('node:') || ['fs', 'path', 'crypto', 'os', 'child_process'].includes(i.from),
      }).toMatchObject({ node: false });
      if (
        i.from.includes('/activities/') ||
        i.from.startsWith('@temporalio/activity') ||
        i.from.startsWith('@temporalio/worker') ||
        i.from.startsWith('@temporalio/client')
      ) {
        expect({ file, from: i.from, typeOnly: i.typeOnly }).toMatchObject({ typeOnly: true });
      }
      expect({ file, from: i.from }).not.toMatchObject({ from: expect.stringMatching(/manifest-file$/) });
    }
    expect(text).not.toMatch(/Math\.random\(|new Date\(\)|setTimeout\(|process\./);
  });
});
