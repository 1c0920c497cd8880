// `toolplane manifest schemas`: the declarations the tools imply, printed to paste, compared with a
// manifest, and written into it without disturbing the rest of the file.
import { spawnSync } from 'node:child_process';
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

describe('toolplane manifest schemas --tools, as a project gives its tools', () => {
  const root = path.resolve(__dirname, '..', '..');
  const dir = testDir('manifest-schemas-modules');
  // The project's own tools, written as it writes them: zod and toolplane by absolute path (the module sits outside the clone).
  const zod = JSON.stringify(path.join(root, 'node_modules', 'zod'));
  const toolplane = JSON.stringify(path.join(root, 'index'));
  const declaration = `{
    id: 'tool://notes/save',
    description: 'Save a note.',
    input: z.strictObject({ text: z.string() }),
    safety: 'idempotent',
    origin: 'builtin',
    async call() {
      return { saved: true };
    },
  }`;
  fs.writeFileSync(
    path.join(dir, 'tools.ts'),
    `import { z } from ${zod};\nimport { defineTool } from ${toolplane};\n\n` +
      `interface Saved { saved: boolean }\nexport const saveNote = defineTool(${declaration});\n` +
      `export const tools = [saveNote];\nexport type { Saved };\n`,
  );
  // What tsc emits for such a module (CommonJS): `exports.tools`, marked __esModule.
  fs.mkdirSync(path.join(dir, 'dist'));
  fs.writeFileSync(
    path.join(dir, 'dist', 'tools.js'),
    `"use strict";\nObject.defineProperty(exports, "__esModule", { value: true });\nexports.tools = exports.saveNote = void 0;\n` +
      `const z = require(${zod}).z;\nconst toolplane_1 = require(${toolplane});\n` +
      `exports.saveNote = (0, toolplane_1.defineTool)(${declaration});\nexports.tools = [exports.saveNote];\n`,
  );

  // A module exporting its tool by name only, as the README's tools.ts does.
  fs.writeFileSync(
    path.join(dir, 'named.ts'),
    `import { z } from ${zod};\nimport { defineTool } from ${toolplane};\n\nexport const saveNote = defineTool(${declaration});\n`,
  );
  // And plain CommonJS, as a JavaScript project writes it.
  fs.writeFileSync(
    path.join(dir, 'dist', 'plain.js'),
    `const { z } = require(${zod});\nconst { defineTool } = require(${toolplane});\n` +
      `module.exports = { tools: [defineTool(${declaration})] };\n`,
  );

  /** The CLI in a process of its own, as a person runs it: `npx toolplane` (in the clone, the source through tsx). */
  function npxToolplane(...args: string[]): { status: number | null; stdout: string; stderr: string } {
    return spawnSync(process.execPath, [path.join(root, 'bin', 'toolplane.js'), 'manifest', 'schemas', ...args], {
      cwd: dir,
      encoding: 'utf8',
    });
  }

  it.each([
    ['a TypeScript module', './tools.ts'],
    ['a TypeScript module named without its extension', './tools'],
    ['compiled JavaScript exporting `tools`', './dist/tools.js'],
    ['CommonJS whose module.exports holds `tools`', './dist/plain.js'],
    ['a module exporting its tools by name only', './named.ts'],
  ])('loads %s', (_what, module) => {
    const r = npxToolplane('--tools', module);
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(parse(r.stdout)).toEqual([
      {
        id: 'tool://notes/save',
        description: 'Save a note.',
        input_schema: {
          type: 'object',
          properties: { text: { type: 'string' } },
          required: ['text'],
          additionalProperties: false,
        },
        safety: 'idempotent',
      },
    ]);
  });

  it('says so when a module exports no tools', () => {
    fs.writeFileSync(path.join(dir, 'none.js'), 'exports.other = 1;\n');
    const r = npxToolplane('--tools', './none.js');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('./none.js exports no tools');
  });
});
