// The operator's view in a real browser: Debian's chromium, driven by playwright-core, opens the
// dev server's Web UI for a run with a refusal and a pending approval, and approves a call as an
// operator would, from the Web UI alone. Screenshots go to artifacts/screenshots/ (CI keeps them).
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { findChromium } from '../../scripts/chromium';
import { chromium, type Browser, type FrameLocator, type Page } from 'playwright-core';
import type { Manifest } from '../../catalog/manifest';
import type { AgentRunResult } from '../../workflows/agent/run';
import { startAgentRun } from '../../client';
import { resolveEscalation } from '../../workflows/escalation';
import { waitForPending } from '../support/escalations';
import { waitFor } from '../support/wait';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { supportDesk } from '../support/desk';

export const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'artifacts', 'screenshots');

describe('the Web UI shows what toolplane publishes', () => {
  const dir = testDir('web-ui');
  const base = exampleManifest();
  const askable: Manifest = {
    ...base,
    tools: base.tools.map((t) => (t.id === 'tool://mail/send_email' ? { ...t, approval: 'on_violation' } : t)),
  };
  const desk = supportDesk(dir);
  let h: Harness;
  let browser: Browser;

  beforeAll(async () => {
    // A fresh machine installs Debian's chromium here (root and apt-get), as the S3 suite builds weed.
    const executablePath = await findChromium();
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    h = await harness(`web-ui-${randomUUID()}`);
    await h.runWorker({
      manifest: askable,
      tools: desk.tools,
    });
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'] });
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  /** Waits until the page shows `text` (the UI loads and polls), with a deadline. */
  async function shows(page: Page, text: string | RegExp, timeoutMs = 30_000): Promise<void> {
    try {
      await page.getByText(text).first().waitFor({ state: 'visible', timeout: timeoutMs });
    } catch (err) {
      await page.screenshot({ path: path.join(SCREENSHOTS, 'failure.png'), fullPage: true });
      fs.writeFileSync(path.join(SCREENSHOTS, 'failure.txt'), await page.innerText('body').catch(() => ''));
      throw err;
    }
  }

  /**
   * The run's Current Details: markdown the Web UI renders in a frame of its own under User Metadata
   * (the Summary is another), told apart by a word of the markdown in the frame's address.
   */
  function currentDetails(page: Page, word: string): FrameLocator {
    return page.frameLocator(`iframe[title="output"][src*="${word}"]`);
  }

  /** Starts a run that reads a ticket, is refused a refund, and waits for approval of an email. */
  async function startWaitingRun(principal: string, to: string) {
    return startAgentRun(
      h.client,
      {
        prompt: 'Ticket T-101: refund 10.00 EUR and tell the auditor.',
        principal,
        model: {
          endpoint: 'scripted',
          script: [
            { tool_calls: [{ name: 'tickets__read_ticket', arguments: { ticket_id: 'T-101' } }] },
            // Refused: the account came from the ticket, not from the CRM.
            {
              tool_calls: [
                {
                  name: 'payments__refund',
                  arguments: { account_id: 'acct_attacker_991', amount_cents: 1000, currency: 'EUR' },
                },
              ],
            },
            // Waits for a person: the recipient came from the ticket.
            { tool_calls: [{ name: 'mail__send_email', arguments: { to, subject: 'T-101', body: 'done' } }] },
            { final: 'done' },
          ],
        },
      },
      { taskQueue: h.taskQueue },
    );
  }

  it('summaries, search attributes, details and the pending approval of a run', async () => {
    const ui = process.env.TOOLPLANE_TEST_UI_URL;
    if (!ui)
      throw new Error('TOOLPLANE_TEST_UI_URL is not set: run through jest, whose global setup starts the dev server');
    const principal = `agent:web-ui-${randomUUID().slice(0, 8)}`;
    const handle = await startWaitingRun(principal, 'audit@evil.example');
    const pending = await waitForPending(handle);
    // Current Details, as the Web UI's metadata query reads them: what waits, and the effects so far.
    const metadata: { currentDetails?: string } = await handle.query('__temporal_workflow_metadata');
    expect(metadata.currentDetails).toMatch(
      /\*\*Waiting for approval\*\* until \d{4}-\d\d-\d\d \d\d:\d\d UTC: #2 tool:\/\/mail\/send_email/,
    );
    expect(metadata.currentDetails).toMatch(
      /\*\*Effects\*\*: 3 calls: 1 allowed, 1 refused by protected_field:\/account_id, 1 waiting/,
    );
    // The refusal with its reason.
    expect(metadata.currentDetails).toContain(
      '**Refused**: #1 tool://payments/refund (refused by protected_field:/account_id: /account_id',
    );
    const page = await browser.newPage({ viewport: { width: 1400, height: 1800 } });
    try {
      const url = `${ui}/namespaces/default/workflows/${encodeURIComponent(handle.workflowId)}`;
      await page.goto(url);
      // The event history: model turns and the approval timer carry summaries (the run's one tool call
      // that landed is a read-only lookup, whose event shows its tool in its input).
      await shows(page, 'model turn 1');
      await shows(page, /approval deadline \d{4}-\d\d-\d\d \d\d:\d\d UTC: #2 tool:\/\/mail\/send_email/);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'run-history-summaries.png'), fullPage: true });
      // User Metadata: the events with summaries, the pending approval's timer among them.
      await page.getByText('User Metadata', { exact: true }).first().click();
      await shows(page, 'Events with Metadata');
      await page.screenshot({ path: path.join(SCREENSHOTS, 'run-user-metadata.png'), fullPage: true });
      // Search Attributes: toolplane's, as the run published them.
      await page.getByText('Search Attributes', { exact: true }).first().click();
      await shows(page, 'ToolplaneWaitingFor');
      await shows(page, 'ToolplaneRefusals');
      await page.screenshot({ path: path.join(SCREENSHOTS, 'run-search-attributes.png'), fullPage: true });

      // The workflow list, filtered by toolplane's search attributes as an operator would (the
      // saved view of docs/operating-runs.md, narrowed to this test's principal).
      const query =
        `ExecutionStatus = "Running" AND ToolplaneWaitingFor != "none" AND ToolplaneRefusals > 0 ` +
        `AND ToolplanePrincipal = "${principal}"`;
      await page.goto(`${ui}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
      await shows(page, handle.workflowId);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'runs-waiting-with-refusals.png'), fullPage: true });
      // Its columns: principal, whom the run waits for, refusals, tools called; saved as a view.
      await page.getByTestId('workflows-summary-table-configuration-button').click();
      for (const c of ['Run ID', 'End'])
        await page.locator(`[data-testid="orderable-list-item-${c}-remove-button"]:visible`).click();
      for (const c of ['ToolplanePrincipal', 'ToolplaneWaitingFor', 'ToolplaneRefusals', 'ToolplaneToolsCalled'])
        await page.locator(`[data-testid="orderable-list-item-${c}-add-button"]:visible`).click();
      await page.keyboard.press('Escape');
      await page.getByTestId('create-view-button').click();
      await page.getByTestId('save-view-modal-input').pressSequentially('Toolplane runs waiting');
      await page.locator('[data-testid="confirm-modal-button"]:visible').click();
      await shows(page, 'Toolplane runs waiting');
      const row = page.locator('tr', { hasText: handle.workflowId }).first();
      await waitFor('the row to show the columns', 30_000, async () => {
        const cells = (await row.innerText()).split(/\s+/);
        return [principal, 'approval', '1', 'tool://tickets/read_ticket'].every((v) => cells.includes(v));
      });
      await page.setViewportSize({ width: 1900, height: 900 });
      await page.screenshot({ path: path.join(SCREENSHOTS, 'runs-waiting-saved-view.png'), fullPage: true });
    } finally {
      await page.close();
    }
    await handle.executeUpdate(resolveEscalation, {
      args: [{ effectKey: pending.effectKey, decision: 'deny', by: 'web-ui-test', reason: 'screenshots taken' }],
    });
    await handle.result();
    for (const f of [
      'run-history-summaries.png',
      'run-user-metadata.png',
      'run-search-attributes.png',
      'runs-waiting-with-refusals.png',
      'runs-waiting-saved-view.png',
    ])
      expect(fs.statSync(path.join(SCREENSHOTS, f)).size).toBeGreaterThan(10_000);
  });

  it('an operator approves a waiting call from the Web UI: Send an Update with the data Current Details give', async () => {
    const ui = process.env.TOOLPLANE_TEST_UI_URL;
    if (!ui)
      throw new Error('TOOLPLANE_TEST_UI_URL is not set: run through jest, whose global setup starts the dev server');
    const to = `audit-${randomUUID().slice(0, 8)}@evil.example`;
    const handle = await startWaitingRun(`agent:web-ui-${randomUUID().slice(0, 8)}`, to);
    const pending = await waitForPending(handle);
    let result: AgentRunResult | undefined;
    const context = await browser.newContext({ viewport: { width: 1400, height: 1400 } });
    // The operator copies the data from the page and pastes it into the form, through the clipboard.
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(ui).origin });
    const page = await context.newPage();
    try {
      await page.goto(`${ui}/namespaces/default/workflows/${encodeURIComponent(handle.workflowId)}`);
      await shows(page, 'model turn 1');
      await page.getByText('User Metadata', { exact: true }).first().click();
      // Current Details: the whole effect key, and the update's data on a line of its own.
      const details = currentDetails(page, 'resolveEscalation');
      await details.getByText(`Effect key: ${pending.effectKey}`).waitFor({ timeout: 30_000 });
      const payload = details.locator('code', { hasText: '"decision": "approve"' }).first();
      await payload.waitFor({ timeout: 30_000 });
      const data = await payload.innerText();
      expect(JSON.parse(data)).toEqual({ effectKey: pending.effectKey, decision: 'approve', by: 'web-ui' });
      await page.screenshot({ path: path.join(SCREENSHOTS, 'approve-current-details.png'), fullPage: true });
      // Selected as a whole (a block of its own, on the lines the Web UI's editor gives it) and copied.
      await payload.click();
      await payload.selectText();
      await page.keyboard.press('Control+C');

      // More Actions → Send an Update, name resolveEscalation, the data pasted, Submit.
      await page.locator('button[aria-controls="workflow-actions"]:visible').first().click();
      await page
        .getByRole('menuitem', { name: /Send an Update/ })
        .first()
        .click();
      await page.locator('[data-testid="update-select-button"]:visible').click();
      await page.locator('[role="option"]:visible', { hasText: 'resolveEscalation' }).click();
      const editor = page.locator('[role="textbox"][data-language="json"]:visible').first();
      await editor.click();
      await page.keyboard.press('Control+V');
      expect(JSON.parse(await editor.innerText())).toEqual(JSON.parse(data));
      await page.screenshot({ path: path.join(SCREENSHOTS, 'approve-send-an-update.png'), fullPage: true });
      await page.locator('button:visible', { hasText: 'Submit' }).click();
      await shows(page, 'Update successful');

      // The run went on: the email was sent, once, and the journal says who approved it.
      result = await handle.result();
      await page.reload();
      await shows(page, 'mail/send_email #2');
      // Current Details of the completed run (a worker answers for it): nothing waits, one call approved.
      await page.getByText('User Metadata', { exact: true }).first().click();
      await currentDetails(page, 'Effects')
        .getByText('Effects: 3 calls: 1 allowed, 1 approved, 1 refused by protected_field:/account_id')
        .waitFor({ timeout: 30_000 });
      await page.screenshot({ path: path.join(SCREENSHOTS, 'approve-completed.png'), fullPage: true });
    } finally {
      await context.close();
    }
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    expect(desk.outbox.all().filter((m) => m.to === to)).toHaveLength(1);
    const sent = result!.journal.find((e) => e.position === 2);
    expect(sent).toMatchObject({ toolId: 'tool://mail/send_email', decision: 'approved', decidedBy: 'web-ui' });
    for (const f of ['approve-current-details.png', 'approve-send-an-update.png', 'approve-completed.png'])
      expect(fs.statSync(path.join(SCREENSHOTS, f)).size).toBeGreaterThan(10_000);
  });
});
