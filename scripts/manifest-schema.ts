// `npm run manifest:schema`: writes manifest.schema.json (the manifest's JSON Schema, published in the
// package) and the field tables of docs/manifest.md, both made from the zod schema that parses
// manifests. `-- --check` writes nothing and fails when either is stale (test/catalog/manifest-schema.test.ts
// checks the same in `npm test`).
import fs from 'node:fs';
import path from 'node:path';
import { manifestJsonSchema } from '../runtime/manifest-json-schema';
import { withFieldTables } from './manifest-reference';

const root = path.resolve(__dirname, '..');
export const SCHEMA_FILE = path.join(root, 'manifest.schema.json');
export const REFERENCE_FILE = path.join(root, 'docs', 'manifest.md');

/** What the two files should hold. */
export function generated(): { schema: string; reference: string } {
  const schema = manifestJsonSchema();
  return {
    schema: `${JSON.stringify(schema, null, 2)}\n`,
    reference: withFieldTables(fs.readFileSync(REFERENCE_FILE, 'utf8'), schema),
  };
}

function main(): void {
  const check = process.argv.includes('--check');
  const want = generated();
  const stale = [
    [SCHEMA_FILE, want.schema],
    [REFERENCE_FILE, want.reference],
  ].filter(([file, text]) => !fs.existsSync(file!) || fs.readFileSync(file!, 'utf8') !== text);
  for (const [file, text] of stale) {
    if (check) console.error(`${path.relative(root, file!)} is stale: run npm run manifest:schema`);
    else fs.writeFileSync(file!, text!);
  }
  if (!check) for (const [file] of stale) console.log(`wrote ${path.relative(root, file!)}`);
  if (check && stale.length > 0) process.exitCode = 1;
}

if (require.main === module) main();
