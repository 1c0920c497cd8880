import path from 'node:path';
import fs from 'node:fs';
import { buildProgram, main } from '../../cli';
import { EXAMPLE_MANIFEST } from '../support/env';

async function run(...args: string[]): Promise<string[]> {
  const lines: string[] = [];
  await buildProgram((l) => lines.push(l)).parseAsync(['node', 'client.ts', ...args]);
  return lines;
}

describe('client.ts manifest', () => {
  it('check validates the example and prints its counts', async () => {
    expect(await run('manifest', 'check', EXAMPLE_MANIFEST)).toEqual([
      expect.stringMatching(/ok, 5 tools, 4 servers, 0 warnings$/),
    ]);
  });

  it('digest prints the committed digests', async () => {
    const [json] = await run('manifest', 'digest', EXAMPLE_MANIFEST, '--json');
    const snapshot = JSON.parse(
      fs.readFileSync(path.resolve(__dirname, '..', 'fixtures', 'example-digests.json'), 'utf8'),
    );
    expect(JSON.parse(json!)).toEqual(snapshot);
  });

  it('check exits with 2 and names the problem for a bad manifest', async () => {
    const errors: string[] = [];
    const spy = jest.spyOn(console, 'error').mockImplementation((m: string) => void errors.push(m));
    try {
      const code = await main([
        'node',
        'client.ts',
        'manifest',
        'check',
        path.resolve(__dirname, '..', 'fixtures', 'bad-manifests', '08-mutating-blind-retry.yaml'),
      ]);
      expect(code).toBe(2);
      expect(errors.join('\n')).toMatch(/08-mutating-blind-retry\.yaml:10 at tools\[0\]\.recovery/);
    } finally {
      spy.mockRestore();
    }
  });
});
