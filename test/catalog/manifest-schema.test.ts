// The manifest's JSON Schema (manifest.schema.json, published as toolplane/manifest.schema.json) and its
// reference (docs/manifest.md): made from the parser's own zod schema, current, complete, and agreeing
// with the parser on every example manifest and on the malformed corpus.
import fs from 'node:fs';
import path from 'node:path';
import Ajv, { type ErrorObject } from 'ajv';
import { parse } from 'yaml';
import { manifestDigest } from '../../catalog/digest';
import type { ManifestInvalid } from '../../catalog/errors';
import { schemaReference, starterManifest } from '../../cli/manifest-starter';
import { loadManifest, parseManifest, parsePath } from '../../runtime/manifest-file';
import { manifestJsonSchema, propertyPaths, type SchemaNode } from '../../runtime/manifest-json-schema';
import { flowYaml } from '../../runtime/manifest-shape';
import { generated, REFERENCE_FILE, SCHEMA_FILE } from '../../scripts/manifest-schema';
import { docPages, fencedSamples } from '../support/doc-pages';

const root = path.resolve(__dirname, '..', '..');
const committed = JSON.parse(fs.readFileSync(SCHEMA_FILE, 'utf8')) as SchemaNode;

function validator(): (value: unknown) => ErrorObject[] {
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictTuples: false });
  ajv.addFormat('uri', (s: string) => URL.canParse(s));
  const validate = ajv.compile(committed);
  return (value) => (validate(value) ? [] : [...(validate.errors ?? [])]);
}

function exampleManifests(): string[] {
  const out: string[] = [];
  for (const dir of fs.readdirSync(path.join(root, 'examples'))) {
    const full = path.join(root, 'examples', dir);
    if (!fs.statSync(full).isDirectory()) continue;
    for (const f of fs.readdirSync(full)) if (/^manifest.*\.ya?ml$/.test(f)) out.push(path.join(full, f));
  }
  return out.sort();
}

describe('manifest.schema.json', () => {
  it('is what the zod schema makes (npm run manifest:schema regenerates it and the reference)', () => {
    const want = generated();
    expect(committed).toEqual(manifestJsonSchema());
    expect(fs.readFileSync(SCHEMA_FILE, 'utf8')).toBe(want.schema);
    expect(fs.readFileSync(REFERENCE_FILE, 'utf8')).toBe(want.reference);
  });

  it('is published: in the package files and exports as toolplane/manifest.schema.json', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      files: string[];
      exports: Record<string, unknown>;
    };
    expect(pkg.files).toContain('manifest.schema.json');
    expect(pkg.exports['./manifest.schema.json']).toBe('./manifest.schema.json');
  });

  it('is draft-07 (what yaml-language-server reads) and describes every field', () => {
    expect(committed.$schema).toBe('http://json-schema.org/draft-07/schema#');
    const fields = propertyPaths(committed);
    expect(fields.length).toBeGreaterThan(100);
    expect(fields.filter((f) => !f.node.description).map((f) => f.path)).toEqual([]);
  });

  const examples = exampleManifests();

  it('finds the example manifests', () => {
    expect(examples.length).toBeGreaterThanOrEqual(7);
  });

  it.each(examples.map((f) => path.relative(root, f)))(
    '%s is valid by the schema and names it in a yaml-language-server modeline',
    (file) => {
      const text = fs.readFileSync(path.join(root, file), 'utf8');
      expect(validator()(parse(text))).toEqual([]);
      expect(() => parseManifest(text, file)).not.toThrow();
      const ref = /^# yaml-language-server: \$schema=(\S+)\n/.exec(text)?.[1];
      // The consumer example is a project of its own: its schema is the installed package's.
      if (file.startsWith('examples/consumer/')) expect(ref).toBe('./node_modules/toolplane/manifest.schema.json');
      else expect(path.resolve(root, path.dirname(file), ref!)).toBe(SCHEMA_FILE);
    },
  );

  it('accepts the starter `manifest init` writes', () => {
    const text = starterManifest(schemaReference(path.join(root, 'manifest.yaml')));
    expect(text.split('\n')[0]).toBe('# yaml-language-server: $schema=./manifest.schema.json');
    expect(validator()(parse(text))).toEqual([]);
  });

  it('accepts a $schema key, which leaves the digest as it was', () => {
    const file = path.join(root, 'examples', 'consumer', 'manifest.yaml');
    const plain = parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    const withKey = { $schema: './node_modules/toolplane/manifest.schema.json', ...plain };
    expect(validator()(withKey)).toEqual([]);
    const parsed = parseManifest(JSON.stringify(withKey), 'manifest.json').manifest;
    expect(manifestDigest(parsed)).toBe(manifestDigest(loadManifest(file).manifest));
    expect(validator()({ ...plain, $schema: 7 })).not.toEqual([]);
  });
});

describe('the schema and the parser refuse the same malformed manifests', () => {
  const dir = path.join(root, 'test', 'fixtures', 'bad-manifests');
  // Refusals the schema cannot express: a refinement across fields (at least one subject or group).
  const beyondTheSchema = ['26-approver-names-nobody.yaml'];
  const refused = fs
    .readdirSync(dir)
    .sort()
    .map((name) => {
      try {
        loadManifest(path.join(dir, name));
        throw new Error(`${name} was accepted`);
      } catch (e) {
        return { name, problems: (e as ManifestInvalid).data!.problems };
      }
    });
  const shapeRefusals = refused.filter((r) => r.problems.some((p) => p.kind === 'shape'));

  it('has shape refusals to compare', () => {
    expect(shapeRefusals.length).toBeGreaterThanOrEqual(10);
  });

  it.each(shapeRefusals.map((r) => r.name).filter((n) => !beyondTheSchema.includes(n)))(
    '%s: the schema refuses it at the node the parser names',
    (name) => {
      const problems = shapeRefusals.find((r) => r.name === name)!.problems.filter((p) => p.kind === 'shape');
      const text = fs.readFileSync(path.join(dir, name), 'utf8');
      const errors = validator()(name.endsWith('.json') ? JSON.parse(text) : parse(text));
      expect(errors).not.toEqual([]);
      for (const p of problems) {
        const segments = parsePath(p.path);
        const pointer = (s: (string | number)[]): string => s.map((x) => `/${x}`).join('');
        const at = errors.filter(
          (e) =>
            e.instancePath === pointer(segments) ||
            // An unknown or missing key: the schema reports it at the mapping that holds it.
            (e.instancePath === pointer(segments.slice(0, -1)) &&
              ((e.params as { additionalProperty?: string; missingProperty?: string }).additionalProperty ===
                segments.at(-1) ||
                (e.params as { missingProperty?: string }).missingProperty === segments.at(-1))),
        );
        expect({ problem: p.path, schemaErrorsThere: at.length > 0 }).toEqual({
          problem: p.path,
          schemaErrorsThere: true,
        });
      }
    },
  );

  it.each(beyondTheSchema)('%s is refused by the parser only (a refinement the schema cannot state)', (name) => {
    expect(refused.find((r) => r.name === name)!.problems.some((p) => p.kind === 'shape')).toBe(true);
    expect(validator()(parse(fs.readFileSync(path.join(dir, name), 'utf8')))).toEqual([]);
  });
});

describe('the manifest reference (docs/manifest.md)', () => {
  const reference = fs.readFileSync(REFERENCE_FILE, 'utf8');

  it('names every field of the schema', () => {
    const missing = propertyPaths(committed)
      .map((f) => f.path)
      .filter((p) => !reference.includes(`\`${p}\``));
    expect(missing).toEqual([]);
  });

  it('names no field the schema does not have', () => {
    const fields = new Set(propertyPaths(committed).map((f) => f.path));
    const rows = [...reference.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);
    expect(new Set(rows).size).toBe(fields.size);
    expect(rows.filter((r) => !fields.has(r))).toEqual([]);
  });

  it('states the default of every field that has one', () => {
    for (const f of propertyPaths(committed).filter((x) => x.node.default !== undefined)) {
      const row = reference.split('\n').find((l) => l.startsWith(`| \`${f.path}\` |`))!;
      expect({ field: f.path, defaultCell: row.split(' | ')[2] }).toEqual({
        field: f.path,
        defaultCell: `\`${flowYaml(f.node.default)}\``,
      });
    }
  });
});

describe('the complete manifests in the README and the docs pages', () => {
  /** A YAML sample that is a whole manifest (the format and its tools), not a section of one. */
  const complete = (page: string) =>
    fencedSamples(page, 'yaml').filter((b) => /^version: 1\b/m.test(b) && /^tools:/m.test(b));
  /** How many each page holds: a sample moved, or a fence that no longer reads as YAML, shows here. */
  const expected: Record<string, number> = { 'README.md': 1, 'docs/manifest.md': 1 };

  it('are found where they are expected', () => {
    const found = Object.fromEntries(
      docPages()
        .map((p) => [p, complete(p).length] as const)
        .filter(([, n]) => n > 0),
    );
    expect(found).toEqual(expected);
  });

  it.each(Object.keys(expected))('the complete manifests in %s pass the parser and the schema', (page) => {
    for (const b of complete(page)) {
      expect(() => parseManifest(b, page)).not.toThrow();
      expect(validator()(parse(b))).toEqual([]);
    }
  });
});
