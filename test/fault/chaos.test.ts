// A short chaos campaign: random SIGKILLs of real workers; `npm run chaos` runs a long one.
import { formatCounts, runCampaign } from '../../scripts/chaos';
import { testAddress } from '../support/env';

it('a short random-kill campaign lands every refund exactly once', async () => {
  const counts = await runCampaign({
    address: testAddress(),
    workflowBundle: process.env.TOOLPLANE_TEST_BUNDLE!,
    runs: 3,
    callsPerRun: 2,
    seed: 20261130,
  });
  console.log(`chaos campaign (short):\n${formatCounts(counts)}`);
  expect(counts.kills).toBeGreaterThan(0);
  expect(counts).toMatchObject({ runs: 3, intended: 6, landed: 6, duplicates: 0, lost: 0, resentUnderSameKey: 0 });
});
