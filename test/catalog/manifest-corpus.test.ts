import fs from 'node:fs';
import path from 'node:path';
import { CatalogError, type ManifestInvalid } from '../../catalog/errors';
import { loadManifest } from '../../runtime/manifest-file';

const dir = path.resolve(__dirname, '..', 'fixtures', 'bad-manifests');

/** Each malformed manifest and where its problem must be reported. */
const expected: Record<string, { path: string; says: RegExp }> = {
  '01-yaml-syntax.yaml': { path: '', says: /not valid YAML/ },
  '02-json-syntax.json': { path: '', says: /not valid JSON/ },
  '03-not-a-mapping.yaml': { path: '', says: /mapping with version, servers and tools/ },
  '04-wrong-version.yaml': { path: 'version', says: /expected 1/ },
  '05-unknown-tool-key.yaml': { path: 'tools[0].colour', says: /unknown key "colour"/ },
  '06-bad-tool-id.yaml': { path: 'tools[0].id', says: /tool:\/\/server\/name/ },
  '07-bad-safety.yaml': { path: 'tools[0].safety', says: /read_only/ },
  '08-mutating-blind-retry.yaml': { path: 'tools[0].recovery', says: /mutating tool with recovery "retry"/ },
  '09-reconcile-without-source.yaml': { path: 'tools[0].recovery', says: /needs a source that can reconcile/ },
  '10-protected-field-not-in-schema.yaml': {
    path: 'tools[1].protected_fields[0].pointer',
    says: /\/recipient is not a property/,
  },
  '11-undeclared-server.yaml': { path: 'tools[0].id', says: /server "billing"/ },
  '12-duplicate-tool.yaml': { path: 'tools[1].id', says: /declared twice/ },
  '13-negative-attempts.yaml': { path: 'tools[0].retry.maximum_attempts', says: />=0/ },
  '14-bad-duration.yaml': { path: 'tools[0].timeouts.start_to_close', says: /duration/ },
  '15-bad-sensitivity.yaml': { path: 'tools[0].sensitivity.max', says: /confidential/ },
  '16-invalid-json-schema.yaml': { path: 'tools[0].input_schema', says: /not a valid JSON Schema/ },
  '17-source-not-declared.yaml': {
    path: 'tools[0].protected_fields[0].from_sources',
    says: /tool:\/\/crm\/nobody is not a declared tool/,
  },
  '18-concurrency-key-not-in-schema.yaml': { path: 'tools[0].concurrency.key', says: /\/account is not a property/ },
  '19-unknown-server-key.json': { path: 'servers.crm.port', says: /unknown key "port"/ },
  '20-ext-id-on-in-process-server.yaml': { path: 'tools[0].id', says: /ext: identities belong to extension servers/ },
  '21-duplicate-yaml-key.yaml': { path: '', says: /keys must be unique/ },
  '22-protected-field-without-rule.yaml': { path: 'tools[0].protected_fields[0].from_sources', says: /expected array/ },
  '23-schema-not-object.yaml': { path: 'tools[0].input_schema.type', says: /arguments are an object/ },
  '24-empty.yaml': { path: '', says: /mapping/ },
  '25-approver-undeclared-tool.yaml': {
    path: 'approvers[0].tools[0]',
    says: /tool:\/\/payments\/refnud is not a declared tool/,
  },
  '26-approver-names-nobody.yaml': { path: 'approvers[0].subjects', says: /at least one subject or group/ },
  '27-approver-bad-decision.yaml': { path: 'approvers[0].decisions[1]', says: /approve/ },
  '28-approver-own-run-not-boolean.yaml': { path: 'approvers[0].own_run', says: /boolean/ },
};

describe('the malformed manifest corpus', () => {
  const files = fs.readdirSync(dir).sort();

  it('has at least 15 files and an expectation for each', () => {
    expect(files.length).toBeGreaterThanOrEqual(15);
    expect(files).toEqual(Object.keys(expected).sort());
  });

  it.each(files)('%s is refused with the file, the path and what was expected', (name) => {
    let caught: unknown;
    try {
      loadManifest(path.join(dir, name));
    } catch (err) {
      caught = err;
    }
    expect(CatalogError.is(caught)).toBe(true);
    const err = caught as ManifestInvalid;
    expect(err.code).toBe('ManifestInvalid');
    expect(err.message).toContain(name);
    const want = expected[name]!;
    const problem = err.data!.problems.find((p) => p.path === want.path);
    expect({ file: name, paths: err.data!.problems.map((p) => p.path), found: !!problem }).toMatchObject({
      found: true,
    });
    expect(problem!.message).toMatch(want.says);
    if (want.path) expect(err.message).toContain(`at ${want.path}:`);
  });

  it('names a missing file without throwing anything untyped', () => {
    expect(() => loadManifest(path.join(dir, 'no-such-file.yaml'))).toThrow(/no-such-file\.yaml.*cannot read: ENOENT/s);
  });

  it('reports YAML problems with their line', () => {
    try {
      loadManifest(path.join(dir, '05-unknown-tool-key.yaml'));
    } catch (err) {
      expect((err as ManifestInvalid).data!.problems[0]!.line).toBe(11);
    }
    expect.assertions(1);
  });
});
