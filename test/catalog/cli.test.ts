import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { buildProgram, main } from '../../cli';
import { EXAMPLE_MANIFEST } from '../support/env';
import { answerHint } from '../../cli/escalations';
import { connectionArgs, connectionSettings, webUiBase } from '../../inspect/connection';
import { JournalPrinter } from '../../inspect/follow';
import { effectsFromHistory, formatEffects } from '../../inspect/journal';
import type { JournalEntry } from '../../common/journal';
import { listQuery } from '../../cli/list';
import { replayOptions, workflowsModule } from '../../cli/replay';

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

describe('toolplane CLI errors without a server', () => {
  async function invoke(...args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
    const out: string[] = [];
    const err: string[] = [];
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
      err.push(String(s));
      return true;
    });
    const stdout = jest.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
      out.push(String(s));
      return true;
    });
    try {
      const code = await main(
        ['node', 'toolplane', ...args],
        (l) => out.push(l),
        (l) => err.push(l),
      );
      return { code, out, err };
    } finally {
      spy.mockRestore();
      stdout.mockRestore();
    }
  }

  it('--help documents the exit codes and the connection settings', async () => {
    const r = await invoke('--help');
    expect(r.code).toBe(0);
    const help = r.out.join('');
    expect(help).toMatch(
      /Exit codes:\n\s+0\s+ok\n\s+1\s+the run failed.*\n\s+2\s+usage error.*\n\s+3\s+the Temporal server is unreachable/,
    );
    expect(help).toMatch(/TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_\*/);
    for (const cmd of [
      'run',
      'list',
      'describe',
      'show',
      'escalations',
      'approve',
      'deny',
      'resolve',
      'cancel',
      'replay',
      'manifest',
      'worker',
    ])
      expect(help).toMatch(new RegExp(`\\n  ${cmd} `));
  });

  it('--version prints the package version', async () => {
    const r = await invoke('--version');
    expect(r.code).toBe(0);
    expect(r.out.join('').trim()).toBe(
      (JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string })
        .version,
    );
  });

  it('an unreachable server exits 3 and names the address', async () => {
    const r = await invoke('show', 'wf-1', '--address', '127.0.0.1:1');
    expect(r.code).toBe(3);
    expect(r.err.join('\n')).toMatch(/^Temporal server at 127\.0\.0\.1:1 is unreachable: /);
  });

  it('usage errors exit 2: unknown command, bad resolve decision, bad --status, unknown profile', async () => {
    expect((await invoke('frobnicate')).code).toBe(2);
    const bad = await invoke('resolve', 'wf-1', 'ek-1', 'maybe', '--address', '127.0.0.1:1');
    expect(bad.code).toBe(2);
    expect(bad.err.join('\n')).toMatch(/resolve's decision must be retry, landed, abort, not "maybe"/);
    const status = await invoke('list', '--status', 'sleeping', '--address', '127.0.0.1:1');
    // The flags are checked before the (unreachable) server is asked.
    expect(status.code).toBe(2);
    expect(status.err.join('\n')).toMatch(/--status must be one of running, completed, failed/);
    const dirWithConfig = fs.mkdtempSync(path.join(os.tmpdir(), 'tp-cfg-'));
    const config = path.join(dirWithConfig, 'temporal.toml');
    fs.writeFileSync(config, '[profile.default]\naddress = "127.0.0.1:1"\n');
    process.env.TEMPORAL_CONFIG_FILE = config;
    try {
      const missing = await invoke('show', 'wf-1', '--profile', 'nope');
      expect(missing.code).toBe(2);
      expect(missing.err.join('\n')).toMatch(/profile "nope"/);
      // The default profile is read: its address is the one that is unreachable.
      const fromProfile = await invoke('show', 'wf-1');
      expect(fromProfile.code).toBe(3);
      expect(fromProfile.err.join('\n')).toMatch(/127\.0\.0\.1:1 is unreachable/);
    } finally {
      delete process.env.TEMPORAL_CONFIG_FILE;
    }
  });
});

describe('toolplane list and replay, whatever the workflow type', () => {
  it("list selects every run that opened a StepCtx (it carries a principal), not toolplane's workflow types", () => {
    expect(listQuery({})).toBe('ToolplanePrincipal IS NOT NULL');
    expect(listQuery({ principal: 'agent:desk', waiting: true })).toBe(
      "ToolplanePrincipal = 'agent:desk' AND ToolplaneWaitingFor IN ('approval', 'escalation') AND ExecutionStatus = 'Running'",
    );
  });

  it('replay --workflows names a module that does not exist before it connects (exit 2)', async () => {
    const errors: string[] = [];
    const spy = jest.spyOn(console, 'error').mockImplementation((m: string) => void errors.push(m));
    try {
      const code = await main([
        'node',
        'toolplane',
        'replay',
        'wf-1',
        '--workflows',
        './no/such/workflows',
        '--address',
        '127.0.0.1:1',
      ]);
      expect(code).toBe(2);
      expect(errors.join('\n')).toMatch(/--workflows: no workflows module "\.\/no\/such\/workflows"/);
    } finally {
      spy.mockRestore();
    }
  });

  it('replay --workflows takes a path with or without its extension, or a module', () => {
    const root = path.resolve(__dirname, '..', '..');
    const consumer = path.join(root, 'examples', 'consumer', 'workflows.ts');
    expect(workflowsModule('examples/consumer/workflows', root)).toBe(consumer);
    expect(workflowsModule('./examples/consumer/workflows.ts', root)).toBe(consumer);
    expect(workflowsModule(consumer, '/')).toBe(consumer);
    expect(workflowsModule('@temporalio/workflow', root)).toBe(require.resolve('@temporalio/workflow'));
    expect(replayOptions('examples/consumer/workflows').workflowsPath).toBe(consumer);
  });
});

describe('toolplane run refuses bad input before it connects', () => {
  const script = path.resolve(__dirname, '..', '..', 'examples', 'support-desk', 'scripts', 'refund.json');
  async function runCli(...args: string[]): Promise<{ code: number; said: string }> {
    const errors: string[] = [];
    // Nothing listens here: an input that got as far as connecting would exit with 3, not 2.
    const code = await main(
      ['node', 'toolplane', 'run', '--address', '127.0.0.1:1', ...args],
      () => {},
      (l) => errors.push(l),
    );
    return { code, said: errors.join('\n') };
  }

  it.each([
    [['--deadline', 'soon'], /--deadline: must be a duration such as "90s", "10m" or "1h" \(given: "soon"\)/],
    [['--deadline', '0s'], /--deadline: must be longer than zero/],
    [['--max-turns', 'ten'], /--max-turns must be a positive integer, not "ten"/],
    [['--max-turns', '2.5'], /--max-turns must be a positive integer, not "2.5"/],
    [['--max-tool-calls', '-1'], /--max-tool-calls must be a positive integer, not "-1"/],
    [['--grant', 'payments/refund'], /--grant \[0\]: must be a tool identity/],
    [
      ['--manifest', EXAMPLE_MANIFEST, '--grant', 'tool://crm/lookup_customer', 'tool://payments/wire'],
      /--grant \[1\]: tool:\/\/payments\/wire is not a tool the manifest declares \(given: tool:\/\/payments\/wire\)/,
    ],
  ])('%j exits with 2 and names the flag', async (flags, says) => {
    const { code, said } = await runCli('--model', `scripted:${script}`, ...flags);
    expect({ code, said }).toEqual({ code: 2, said: expect.stringMatching(says) });
  });

  it('refuses a script of the wrong shape, naming the turn', async () => {
    const dir = fs.mkdtempSync(path.join(process.env.TOOLPLANE_TEST_DIR ?? '/tmp', 'script-'));
    const bad = path.join(dir, 'bad.json');
    fs.writeFileSync(bad, JSON.stringify({ prompt: 'x', turns: [{ final: 'ok' }, { tool_calls: [{ args: {} }] }] }));
    const { code, said } = await runCli('--model', `scripted:${bad}`);
    expect(code).toBe(2);
    expect(said).toMatch(/--model scripted:.*bad\.json: turns\[1\]/);
    fs.writeFileSync(bad, '{ "turns": ');
    expect(await runCli('--model', `scripted:${bad}`)).toEqual({
      code: 2,
      said: expect.stringMatching(/the model script .*bad\.json is not JSON/),
    });
  });
});

describe("the operator's view, without a server", () => {
  it('finds the Web UI of the server the connection reaches', () => {
    // Configured (--ui-url, TEMPORAL_UI_URL) wins; a local server's UI is at its port + 1000, as the CLI's dev server puts it.
    expect(webUiBase('127.0.0.1:7233')).toBe('http://localhost:8233');
    expect(webUiBase('localhost:17233')).toBe('http://localhost:18233');
    expect(webUiBase('[::1]:7233')).toBe('http://localhost:8233');
    expect(webUiBase('temporal.internal:7233')).toBeUndefined();
    expect(webUiBase('temporal.internal:7233', 'https://ui.internal/')).toBe('https://ui.internal');
    expect(webUiBase('127.0.0.1:7233', 'http://localhost:8080')).toBe('http://localhost:8080');
    expect(webUiBase('ns.acct.tmprl.cloud:7233')).toBe('https://cloud.temporal.io');
    expect(
      connectionSettings({ address: '127.0.0.1:17233' }, { TEMPORAL_UI_URL: 'http://ui.example:8080' }).uiUrl,
    ).toBe('http://ui.example:8080');
    expect(connectionSettings({ address: '127.0.0.1:17233', uiUrl: 'http://flag:1' }, {}).uiUrl).toBe('http://flag:1');
    expect(connectionSettings({ address: 'temporal.internal:7233' }, {}).uiUrl).toBeUndefined();
  });

  it('prints commands with the connection flags that reach the same server', () => {
    expect(connectionArgs({ address: '127.0.0.1:7233', namespace: 'default' })).toEqual([]);
    expect(connectionArgs({ address: '10.0.0.5:7233', namespace: 'prod', profile: 'ops' })).toEqual([
      '--profile',
      'ops',
      '--address',
      '10.0.0.5:7233',
      '--namespace',
      'prod',
    ]);
    expect(
      answerHint('wf-1', { effectKey: 'ek-1', kind: 'approval' }, { address: '10.0.0.5:7233', namespace: 'prod' }),
    ).toEqual([
      'approve: npx toolplane approve wf-1 ek-1 --address 10.0.0.5:7233 --namespace prod',
      'deny:    npx toolplane deny wf-1 ek-1 --reason "<why>" --address 10.0.0.5:7233 --namespace prod',
    ]);
    expect(answerHint("it's", { effectKey: 'ek-1', kind: 'in_doubt' })[0]).toBe(
      `retry:   npx toolplane resolve 'it'\\''s' ek-1 retry`,
    );
  });

  const entry = (position: number, more: Partial<JournalEntry> = {}): JournalEntry => ({
    position,
    toolId: `tool://t/${position}`,
    decision: 'allowed',
    attempts: 1,
    recovery: 'none',
    ...more,
  });

  it('the run follower prints effects in position order, and an approval when it shows', () => {
    const printer = new JournalPrinter();
    // #1 finished before #0 (concurrent calls): nothing is printed until #0 has its outcome.
    expect(printer.lines([entry(0), entry(1, { outcome: 'ok' })])).toEqual([]);
    expect(printer.lines([entry(1, { outcome: 'ok' }), entry(0, { outcome: 'ok' })])).toEqual([
      '  #0 tool://t/0  allowed → ok',
      '  #1 tool://t/1  allowed → ok',
    ]);
    // A person approved #2; its call is still under way.
    const approved = entry(2, { decision: 'approved', decidedBy: 'alice', rule: 'approval' });
    expect(printer.lines([approved])).toEqual(['  #2 tool://t/2  approved by alice; the call goes ahead']);
    expect(printer.lines([approved])).toEqual([]);
    expect(printer.lines([{ ...approved, outcome: 'ok' }])).toEqual(['  #2 tool://t/2  approved (approval) → ok']);
    // At the end, what is left is printed in order.
    expect(printer.lines([entry(4, { outcome: 'ok' }), entry(3)], true)).toEqual([
      '  #3 tool://t/3  allowed → running',
      '  #4 tool://t/4  allowed → ok',
    ]);
  });

  it('show lists a call waiting for approval as waiting, and who approved or denied', () => {
    const waiting = effectsFromHistory(
      [],
      [entry(0, { outcome: 'ok', effectKey: 'ek-0' }), entry(1, { rule: 'protected_field:/to', attempts: 0 })],
      [
        {
          effectKey: 'ek-1',
          toolId: 'tool://t/1',
          position: 1,
          reason: 'tool://t/1 needs a person',
          deadline: Date.UTC(2030, 0, 1),
          kind: 'approval',
        },
      ],
    );
    expect(waiting[1]).toMatchObject({
      effectKey: 'ek-1',
      decision: 'awaiting approval',
      rule: 'protected_field:/to',
      outcome: 'waiting',
      waiting: { kind: 'approval', deadline: '2030-01-01T00:00:00.000Z' },
    });
    expect(formatEffects(waiting)[2]).toMatch(
      /^#1\s+tool:\/\/t\/1\s+ek-1…\s+0\s+none\s+waiting\s+awaiting approval · protected_field:\/to · tool:\/\/t\/1 needs a person$/,
    );
    // A call under way (no outcome yet, nothing waits) is pending, not refused.
    expect(effectsFromHistory([], [entry(0)])[0]!.outcome).toBe('pending');
    const decided = effectsFromHistory(
      [],
      [
        entry(0, { decision: 'approved', decidedBy: 'alice', outcome: 'ok', effectKey: 'ek-0' }),
        entry(1, { decision: 'denied', decidedBy: 'bob', outcome: 'refused' }),
      ],
    );
    expect(decided.map((v) => v.personDecisions)).toEqual([['approve by alice'], ['deny by bob']]);
  });
});
