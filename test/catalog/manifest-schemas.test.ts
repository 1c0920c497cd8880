// `toolplane manifest schemas`: the declarations the tools imply, printed to paste, compared with a
// manifest, and written into it without disturbing the rest of the file.
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { main } from '../../cli';
import { ToolRegistry } from '../../activities/tool-registry';
import { createTools } from '../../examples/support-desk/tools';
import { loadManifest } from '../../runtime/manifest-file';
import { EXAMPLE_MANIFEST, testDir } from '../support/env';

const TOOLS = path.resolve(__dirname, '..', '..', 'examples', 'support-desk', 'tools');

async function cli(...args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    ['node', 'toolplane', 'manifest', 'schemas', '--tools', TOOLS, ...args],
    (l) => out.push(l),
    (l) => err.push(l),
  );
  return { code, out, err };
}

describe('toolplane manifest schemas', () => {
  it("prints each tool's id, description, input_schema and safety, as the manifest declares them", async () => {
    const { code, out } = await cli();
    expect(code).toBe(0);
    const printed = parse(out.join('\n')) as Record<string, unknown>[];
    const { manifest } = loadManifest(EXAMPLE_MANIFEST);
    expect(printed).toEqual(
      manifest.tools.map((t) => ({
        id: t.id,
        description: t.description,
        input_schema: t.input_schema,
        safety: t.safety,
      })),
    );
  });

  it('says a manifest in step with the tools is, and exits 0', async () => {
    const { code, out } = await cli('--manifest', EXAMPLE_MANIFEST);
    expect(code).toBe(0);
    expect(out.join('\n')).toContain('every implementation matches its declaration (5 tools)');
  });

  it('names what differs and exits 1; --write puts the derived declarations in, keeping the rest of the file', async () => {
    const file = path.join(testDir('manifest-schemas'), 'manifest.yaml');
    const original = fs.readFileSync(EXAMPLE_MANIFEST, 'utf8');
    const drifted = original
      // a block-style schema, one of its lines changed
      .replace(
        '        email: { type: string, description: The customer email address. }',
        '        email: { type: string }',
      )
      // a description
      .replace('description: Send an email to one recipient.', 'description: Send an email.');
    expect(drifted).not.toBe(original);
    fs.writeFileSync(file, drifted);

    const compared = await cli('--manifest', file, '--json');
    expect(compared.code).toBe(1);
    const { differences } = JSON.parse(compared.out.join('\n')) as {
      differences: { toolId: string; field: string }[];
    };
    expect(differences.map((d) => [d.toolId, d.field])).toEqual([
      ['tool://crm/lookup_customer', 'input_schema'],
      ['tool://mail/send_email', 'description'],
    ]);

    const written = await cli('--manifest', file, '--write');
    expect(written.code).toBe(0);
    expect(written.out).toEqual(
      expect.arrayContaining([
        'wrote tool://crm/lookup_customer input_schema',
        'wrote tool://mail/send_email description',
      ]),
    );
    const { manifest } = loadManifest(file);
    expect(new ToolRegistry(createTools()).drift(manifest)).toEqual([]);
    // Comments, layout and every untouched declaration are as they were: here, the file is the original again.
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
    expect((await cli('--manifest', file)).code).toBe(0);
  });
});
