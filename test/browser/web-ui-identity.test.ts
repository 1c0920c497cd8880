// Approving from the Web UI on a worker that verifies who decides: Debian's chromium, driven by
// playwright-core, copies the update's data from the run's Current Details, puts the approver's own
// token where they say, and sends it with one click on Submit ("Send an Update" → resolveEscalation),
// as a person does. A token of someone who is no approver is refused in the dialog; an approver's is
// taken, and the run records its verified subject. Then the worker restarts (the run replays the
// refused and the accepted update) and the run goes on to its next approval and completes.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Worker } from '@temporalio/worker';
import { findChromium } from '../../scripts/chromium';
import type { Manifest } from '../../catalog/manifest';
import { approve } from '../../client';
import { loadManifest } from '../../runtime/manifest-file';
import type { AgentRunResult } from '../../workflows/agent/run';
import { pendingEscalations, type PendingEscalation } from '../../workflows/escalation';
import { APPROVER_TOKEN } from '../../workflows/run-status';
import { agentInput } from '../support/agent';
import { supportDesk } from '../support/desk';
import { EXAMPLE_MANIFEST, harness, testDir, type Harness } from '../support/env';
import { testIssuer, type TestIssuer } from '../support/identity';
import { waitFor } from '../support/wait';

const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'artifacts', 'screenshots');
const DESK = 'desk-lead@corp.example';
const FINANCE = 'finance-approvers';
const ATTACKER = 'acct_attacker_991';

describe('the Web UI answer on a worker that verifies who decides', () => {
  const dir = testDir('web-ui-identity');
  // The example: a refund to an account the CRM did not produce waits for a declared approver.
  const manifest: Manifest = loadManifest(path.join(path.dirname(EXAMPLE_MANIFEST), 'manifest.identity.yaml')).manifest;
  const { payments, tools } = supportDesk(dir);
  let h: Harness;
  let issuer: TestIssuer;
  let browser: Browser;
  let worker: { stop(): Promise<void> } | undefined;

  /** A worker with the issuer's identity, serving until `stop()`: a restart is a stop and a new one. */
  async function serve(): Promise<{ stop(): Promise<void> }> {
    const w: Worker = await h.startWorker({
      manifest,
      tools,
      identity: issuer.identity,
      insecureAssertedPrincipals: false,
    });
    const done = w.run();
    return {
      async stop() {
        w.shutdown();
        await done;
      },
    };
  }

  beforeAll(async () => {
    const executablePath = await findChromium();
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    issuer = await testIssuer();
    h = await harness(`web-ui-identity-${randomUUID()}`);
    worker = await serve();
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'] });
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await h?.close();
  });

  /** Waits until the page shows `text`, with a deadline; on failure keeps a screenshot and the page's text. */
  async function shows(page: Page, text: string | RegExp, timeoutMs = 30_000): Promise<void> {
    try {
      await page.getByText(text).first().waitFor({ state: 'visible', timeout: timeoutMs });
    } catch (err) {
      await page.screenshot({ path: path.join(SCREENSHOTS, 'identity-failure.png'), fullPage: true });
      fs.writeFileSync(path.join(SCREENSHOTS, 'identity-failure.txt'), await page.innerText('body').catch(() => ''));
      throw err;
    }
  }

  it("an approver pastes the data Current Details give, with their own token, and Submit approves the call; the worker's restart leaves the run healthy", async () => {
    const ui = process.env.TOOLPLANE_TEST_UI_URL;
    if (!ui)
      throw new Error('TOOLPLANE_TEST_UI_URL is not set: run through jest, whose global setup starts the dev server');
    const refund = (cents: number) => ({
      tool_calls: [
        {
          name: 'payments__refund',
          arguments: { account_id: ATTACKER, amount_cents: cents, currency: 'EUR', memo: 'policy' },
        },
      ],
    });
    const workflowId = `web-ui-identity-${randomUUID()}`;
    const script = {
      prompt: 'Handle ticket T-101.',
      turns: [
        { tool_calls: [{ name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } }] },
        refund(95000),
        refund(94000),
        { final: 'done' },
      ],
    };
    const handle = await h.client.workflow.start('agentRun', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [
        {
          ...agentInput(manifest, script),
          principal: DESK,
          credential: await issuer.runCredential(DESK, workflowId, [FINANCE]),
        },
      ],
    });
    const waiting = (except?: string) =>
      waitFor<PendingEscalation>(`run ${workflowId} to ask for approval`, 120_000, async () =>
        (await handle.query(pendingEscalations)).find((p) => p.effectKey !== except),
      );
    const first = await waiting();
    expect(first).toMatchObject({ position: 1, kind: 'approval', needsCredential: true });

    const context = await browser.newContext({ viewport: { width: 1400, height: 1400 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(ui).origin });
    const page = await context.newPage();
    const refused = await issuer.approverCredential('mallory@corp.example', ['support']);
    const ann = await issuer.approverCredential('ann@corp.example', [FINANCE]);
    try {
      await page.goto(`${ui}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`);
      await shows(page, 'model turn 1');
      await page.getByText('User Metadata', { exact: true }).first().click();
      // Current Details: what the call sends, its key, the update's data, and the CLI's answer with --credential.
      const details = page.frameLocator('iframe[title="output"][src*="resolveEscalation"]');
      await details.getByText(`Effect key: ${first.effectKey}`).waitFor({ timeout: 30_000 });
      await details
        .getByText(`"account_id": "${ATTACKER}", "amount_cents": 95000`)
        .first()
        .waitFor({ timeout: 30_000 });
      await details
        .getByText(`npx toolplane approve ${workflowId} ${first.effectKey} --credential "$TOOLPLANE_CREDENTIAL"`)
        .waitFor({ timeout: 30_000 });
      // The operator selects the update's data and copies it.
      const payload = details.locator('code', { hasText: '"decision": "approve"' }).first();
      await payload.click();
      await payload.selectText();
      await page.keyboard.press('Control+C');
      const copied = String(await page.evaluate('navigator.clipboard.readText()'));
      expect(JSON.parse(copied)).toEqual({
        effectKey: first.effectKey,
        decision: 'approve',
        credential: APPROVER_TOKEN,
      });
      await page.screenshot({ path: path.join(SCREENSHOTS, 'identity-current-details.png'), fullPage: true });

      // More Actions → Send an Update, name resolveEscalation.
      await page.locator('button[aria-controls="workflow-actions"]:visible').first().click();
      await page
        .getByRole('menuitem', { name: /Send an Update/ })
        .first()
        .click();
      await page.locator('[data-testid="update-select-button"]:visible').click();
      await page.locator('[role="option"]:visible', { hasText: 'resolveEscalation' }).click();
      const editor = page.locator('[role="textbox"][data-language="json"]:visible').first();
      const submit = page.locator('button:visible', { hasText: 'Submit' });
      /** Pastes the copied data with `token` where Current Details say, and clicks Submit once. */
      const send = async (token: string) => {
        const data = copied.replace(APPROVER_TOKEN, token);
        await page.evaluate(`navigator.clipboard.writeText(${JSON.stringify(data)})`);
        await editor.click();
        await page.keyboard.press('Control+A');
        await page.keyboard.press('Control+V');
        expect(JSON.parse(await editor.innerText())).toEqual(JSON.parse(data));
        await submit.click();
      };

      // Someone who is no declared approver: the run refuses it, and the dialog says why.
      await send(refused);
      await shows(page, /mallory@corp\.example is not a declared approver/);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'identity-refused-in-dialog.png'), fullPage: true });
      // A declared approver, with one click on Submit.
      await send(ann);
      await shows(page, 'Update successful');
      await page.screenshot({ path: path.join(SCREENSHOTS, 'identity-approved.png'), fullPage: true });
    } finally {
      await context.close();
    }

    // The run goes on to the second refund, which waits for a person too; the worker restarts meanwhile
    // (the new one replays the refused and the accepted update from history) and the run answers it.
    const second = await waiting(first.effectKey);
    await worker!.stop();
    worker = await serve();
    const bea = await issuer.approverCredential('bea@corp.example', [FINANCE]);
    expect(await approve(h.client, workflowId, second.effectKey, { credential: bea })).toEqual({
      by: 'bea@corp.example',
    });
    const result: AgentRunResult = await handle.result();
    expect(result.journal.filter((e) => e.toolId === 'tool://payments/refund')).toMatchObject([
      { position: 1, decision: 'approved', decidedBy: 'ann@corp.example', outcome: 'ok' },
      { position: 2, decision: 'approved', decidedBy: 'bea@corp.example', outcome: 'ok' },
    ]);
    expect(
      payments
        .all()
        .filter((p) => p.account === ATTACKER)
        .map((p) => p.amountCents),
    ).toEqual([95000, 94000]);
    // Healthy: no workflow task failed, before or after the restart; the refused attempt is in history too.
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
    const completed = events.flatMap((e) => e.workflowExecutionUpdateCompletedEventAttributes ?? []);
    expect(completed.map((u) => (u.outcome?.failure ? 'refused' : 'accepted'))).toEqual([
      'refused',
      'accepted',
      'accepted',
    ]);
  }, 300_000);
});
