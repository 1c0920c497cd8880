// The public surface is reviewed: api/*.api.md, one API Extractor report per entry point, must match
// what the entry points export. A change to the surface fails here with the diff until the reports
// are regenerated (`npm run api`) and committed beside it.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');

describe('the public surface', () => {
  it('matches the committed API reports, each name exported from one entry point', () => {
    const run = spawnSync(path.join(root, 'node_modules', '.bin', 'tsx'), ['scripts/api-report.ts', '--check'], {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
    });
    if (run.status !== 0) throw new Error(`npm run api -- --check failed:\n${run.stderr}${run.stdout}`);
    expect(run.stderr).toContain('match the public surface');
  }, 120_000);
});
