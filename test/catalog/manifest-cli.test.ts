// `toolplane manifest init` and what `manifest check` says about a malformed manifest, through the CLI.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { main } from '../../cli';

const root = path.resolve(__dirname, '..', '..');
const bad = (name: string): string => path.join(root, 'test', 'fixtures', 'bad-manifests', name);

async function toolplane(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    ['node', 'toolplane', ...args],
    (l) => out.push(l),
    (l) => err.push(l),
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('toolplane manifest check shows the expected shape with an error', () => {
  it('an unknown key: the keys its mapping takes, required with types, optional with defaults, an example', async () => {
    const r = await toolplane('manifest', 'check', bad('05-unknown-tool-key.yaml'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/05-unknown-tool-key\.yaml:11 at tools\[0\]\.colour: unknown key "colour"/);
    expect(r.err).toContain('expected at tools[0]:');
    expect(r.err).toContain(
      'required: id (tool identity), description (string), input_schema (mapping), safety ("read_only" | "idempotent" | "mutating"), recovery ("retry" | "reconcile" | "fail" | "escalate")',
    );
    expect(r.err).toMatch(/optional: .*honours_idempotency_key \(default false\).*approval \(default none\)/);
    expect(r.err).toContain('no other keys');
    expect(r.err).toMatch(/example: \{ id: tool:\/\/\S+, description: .*, safety: read_only, recovery: retry \}/);
  });

  it('a value outside an enumeration: the allowed values and a one-line example', async () => {
    const r = await toolplane('manifest', 'check', bad('07-bad-safety.yaml'));
    expect(r.code).toBe(2);
    expect(r.err).toContain('expected at tools[0].safety:');
    expect(r.err).toContain('one of "read_only", "idempotent", "mutating"');
    expect(r.err).toContain('example: safety: read_only');
  });

  it('a missing field: the shapes its mapping may take', async () => {
    const r = await toolplane('manifest', 'check', bad('22-protected-field-without-rule.yaml'));
    expect(r.code).toBe(2);
    expect(r.err).toContain('expected at tools[0].protected_fields[0]:');
    expect(r.err).toContain(
      'with from_sources: required: pointer (JSON pointer), from_sources (list of source or place)',
    );
    expect(r.err).toContain('with accepts_untrusted: required: pointer (JSON pointer), accepts_untrusted (true)');
  });

  it('a union told apart by a key: one line per kind', async () => {
    const r = await toolplane('manifest', 'check', bad('19-unknown-server-key.json'));
    expect(r.code).toBe(2);
    expect(r.err).toContain('expected at servers.crm:');
    expect(r.err).toMatch(/kind: mcp_http: required: kind \("mcp_http"\), url \(URL\); optional: reconcile_tool/);
  });

  it('an empty file: the whole manifest', async () => {
    const r = await toolplane('manifest', 'check', bad('24-empty.yaml'));
    expect(r.code).toBe(2);
    expect(r.err).toContain('required: version (1), servers (map of server name to mapping), tools (list of mapping)');
    expect(r.err).toContain('example: { version: 1, servers: { crm: { kind: in_process } }, tools: [] }');
  });

  it('a rule between well-formed declarations names the rule and no shape', async () => {
    const r = await toolplane('manifest', 'check', bad('08-mutating-blind-retry.yaml'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/at tools\[0\]\.recovery: .*mutating tool with recovery "retry"/);
    expect(r.err).not.toContain('expected at');
  });

  it('--json: each problem with its kind and expected shape, on standard output', async () => {
    const r = await toolplane('manifest', 'check', bad('07-bad-safety.yaml'), '--json');
    expect(r.code).toBe(2);
    const report = JSON.parse(r.out) as {
      ok: boolean;
      problems: { path: string; kind: string; expected?: { at: string; lines: string[] } }[];
    };
    expect(report.ok).toBe(false);
    expect(report.problems[0]).toMatchObject({
      path: 'tools[0].safety',
      kind: 'shape',
      expected: { at: 'tools[0].safety', lines: expect.arrayContaining(['example: safety: read_only']) },
    });
  });
});

describe('toolplane manifest init', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolplane-init-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('writes a commented starter that passes manifest check, naming the schema for editors', async () => {
    const file = path.join(dir, 'manifest.yaml');
    const init = await toolplane('manifest', 'init', file);
    expect(init.code).toBe(0);
    const text = fs.readFileSync(file, 'utf8');
    const ref = /^# yaml-language-server: \$schema=(\S+)\n/.exec(text)?.[1];
    expect(fs.realpathSync(path.resolve(dir, ref!))).toBe(fs.realpathSync(path.join(root, 'manifest.schema.json')));
    // Each section is named with its default.
    for (const section of [
      'servers (required)',
      'tools (required)',
      'principals (optional',
      'models (optional',
      'approvers (optional',
      'limits (optional',
    ])
      expect(text).toContain(`# ${section}`);
    const check = await toolplane('manifest', 'check', file);
    expect(check).toMatchObject({ code: 0, err: '' });
    expect(check.out).toMatch(/ok, 1 tools, 1 servers, 0 warnings$/);
  });

  it('refuses to overwrite a file without --force, and overwrites it with', async () => {
    const file = path.join(dir, 'manifest.yaml');
    fs.writeFileSync(file, 'mine\n');
    const refused = await toolplane('manifest', 'init', file);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('exists; pass --force to overwrite it');
    expect(fs.readFileSync(file, 'utf8')).toBe('mine\n');
    expect((await toolplane('manifest', 'init', file, '--force')).code).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^# yaml-language-server: \$schema=/);
  });

  it('writes YAML only', async () => {
    const r = await toolplane('manifest', 'init', path.join(dir, 'manifest.json'));
    expect(r.code).toBe(2);
    expect(fs.existsSync(path.join(dir, 'manifest.json'))).toBe(false);
  });
});
