// The example providers' stores are shared by worker replicas on other hosts or containers (one volume mounted
// into each). Their lock must keep a second writer out while another replica holds it, or a payment lands twice,
// and must not wedge the store when a holder died.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileLock, LOCK_LEASE_MS } from '../../examples/support-desk/file-lock';
import { KeyedLog } from '../../examples/support-desk/keyed-log';
import type { Payment } from '../../examples/support-desk/payments-store';
import { testDir } from '../support/env';
import { waitFor } from '../support/wait';

/** A process id that no longer exists on this host. */
function gonePid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid;
}

function holdAs(dir: string, holder: { host: string; pid: number }): string {
  const text = JSON.stringify({ ...holder, token: 'theirs' });
  fs.writeFileSync(path.join(dir, 'payments.lock'), text);
  return text;
}

const payment = (key: string): Payment => ({
  idempotencyKey: key,
  kind: 'refund',
  account: 'acct_alice_001',
  amountCents: 2500,
  currency: 'EUR',
  memo: key,
});

describe('the example stores’ lock, shared across hosts', () => {
  afterEach(() => jest.useRealTimers());

  /** Starts a record while the lock is held and lets half a lease pass: it must still be waiting. */
  async function waiting(store: KeyedLog<Payment>, key: string) {
    let settled = false;
    const pending = store.record(payment(key)).finally(() => (settled = true));
    await jest.advanceTimersByTimeAsync(LOCK_LEASE_MS / 2);
    expect({ settled, landed: store.all() }).toEqual({ settled: false, landed: [] });
    return { pending };
  }

  it('a live holder on another host keeps the lock: the second writer waits and the key is recorded once', async () => {
    const dir = testDir('lock-foreign');
    const store = new KeyedLog<Payment>(dir, 'payments');
    jest.useFakeTimers();
    // Replica b, on another host, holds the lock and is recording k1; its pid means nothing on this host.
    const theirs = holdAs(dir, { host: 'replica-b', pid: gonePid() });
    const { pending: mine } = await waiting(store, 'k1');
    expect(fs.readFileSync(path.join(dir, 'payments.lock'), 'utf8')).toBe(theirs);

    // Replica b's record lands and it releases the lock; ours is then a repeat of the same key.
    fs.appendFileSync(
      path.join(dir, 'payments.jsonl'),
      JSON.stringify({ ...payment('k1'), id: 'payments_1', at: new Date().toISOString() }) + '\n',
    );
    fs.rmSync(path.join(dir, 'payments.lock'));
    await jest.advanceTimersByTimeAsync(1_000);
    expect(await mine).toMatchObject({ duplicate: true, record: { id: 'payments_1' } });
    expect(store.all()).toHaveLength(1);
    expect(store.repeats()).toBe(1);
    expect(fs.existsSync(path.join(dir, 'payments.lock'))).toBe(false);
  });

  it("another host's lock whose lease ran out is broken, and the record lands", async () => {
    const dir = testDir('lock-expired');
    const store = new KeyedLog<Payment>(dir, 'payments');
    jest.useFakeTimers();
    holdAs(dir, { host: 'replica-b', pid: gonePid() });
    const { pending: mine } = await waiting(store, 'k1');
    await jest.advanceTimersByTimeAsync(LOCK_LEASE_MS);
    expect(await mine).toMatchObject({ duplicate: false, record: { idempotencyKey: 'k1' } });
    expect(store.all()).toHaveLength(1);
    expect(fs.existsSync(path.join(dir, 'payments.lock'))).toBe(false);
  });

  it('a live process on this host keeps the lock until it releases it', async () => {
    const dir = testDir('lock-live-here');
    const store = new KeyedLog<Payment>(dir, 'payments');
    jest.useFakeTimers();
    const theirs = holdAs(dir, { host: os.hostname(), pid: process.pid });
    const { pending: mine } = await waiting(store, 'k1');
    expect(fs.readFileSync(path.join(dir, 'payments.lock'), 'utf8')).toBe(theirs);
    fs.rmSync(path.join(dir, 'payments.lock'));
    await jest.advanceTimersByTimeAsync(1_000);
    expect(await mine).toMatchObject({ duplicate: false });
  });

  it('a lock left on this host by a process that died is broken at once', async () => {
    const dir = testDir('lock-dead-here');
    const store = new KeyedLog<Payment>(dir, 'payments');
    holdAs(dir, { host: os.hostname(), pid: gonePid() });
    // Real timers: a wait for the lease would time the test out.
    expect(await store.record(payment('k1'))).toMatchObject({ duplicate: false });
    expect(store.all()).toHaveLength(1);
  });

  it('releasing leaves in place a lock that is no longer ours (our lease was broken and another took it)', async () => {
    const dir = testDir('lock-release');
    const file = path.join(dir, 'payments.lock');
    const successor = JSON.stringify({ host: 'replica-b', pid: 1, token: 'successor' });
    const ran = await new FileLock(file).hold(() => {
      expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ host: os.hostname(), pid: process.pid });
      fs.writeFileSync(file, successor);
      return 'ran';
    });
    expect(ran).toBe('ran');
    expect(fs.readFileSync(file, 'utf8')).toBe(successor);
    expect(fs.readdirSync(dir)).toEqual(['payments.lock']);
  });

  it('writer processes racing on the same keys record each key once and count the rest as repeats', async () => {
    const dir = testDir('lock-race');
    const writers = 3;
    const keys = 150;
    const script = path.resolve(__dirname, '..', 'fixtures', 'record-keys.ts');
    const exits = Array.from(
      { length: writers },
      () =>
        new Promise<number | null>((resolve) =>
          spawn(process.execPath, ['--import', 'tsx', script, dir, String(keys)], { stdio: 'inherit' }).on(
            'exit',
            resolve,
          ),
        ),
    );
    const ready = () => fs.readdirSync(dir).filter((f) => f.startsWith('ready-')).length === writers;
    await waitFor('every writer ready', 60_000, ready, 20);
    fs.writeFileSync(path.join(dir, 'go'), '');
    const codes = await Promise.all(exits);
    expect(codes).toEqual(Array(writers).fill(0));
    const store = new KeyedLog<Payment>(dir, 'payments');
    const landed = store.all().map((r) => r.idempotencyKey);
    expect(landed.sort()).toEqual(Array.from({ length: keys }, (_, i) => `k${i}`).sort());
    expect(store.repeats()).toBe((writers - 1) * keys);
    expect(
      fs
        .readdirSync(dir)
        .filter((f) => f.startsWith('payments'))
        .sort(),
    ).toEqual(['payments.jsonl', 'payments.repeats.jsonl']);
  });
});
