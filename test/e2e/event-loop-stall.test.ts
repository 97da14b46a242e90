/**
 * Issue 16: one request cannot stall the instance. With a 1 MB single-word prompt in flight, /healthz
 * on the same server is still answered: asserted by order (health answers arrive before the big
 * answer), not by wall-clock time. Figures: bench/event-loop-stall.ts.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let server: TestServer;

before(async () => {
  server = await startTestServer({
    config: {
      server: { bodyLimitBytes: 8 * 1024 * 1024 },
      models: [
        {
          id: 'echo-wide',
          provider: 'builtin',
          upstreamModel: 'echo',
          capabilities: ['chat', 'streaming'],
          contextWindow: 4_000_000,
          maxOutputTokens: 64,
        },
      ],
    },
  });
});
after(async () => server.close());

test('/healthz is answered while a 1 MB single-word prompt is being served', async () => {
  const events: string[] = [];
  let bigDone = false;
  const big = fetch(`${server.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'echo-wide', max_tokens: 16, messages: [{ role: 'user', content: 'x'.repeat(1024 * 1024) }] }),
  }).then(async (response) => {
    await response.arrayBuffer();
    bigDone = true;
    events.push(`big ${response.status}`);
  });
  const health = (async () => {
    while (!bigDone) {
      const response = await fetch(`${server.origin}/healthz`);
      await response.arrayBuffer();
      if (!bigDone) events.push(`healthz ${response.status}`);
    }
  })();
  await Promise.all([big, health]);
  assert.equal(events.at(-1), 'big 200');
  assert.ok(events.filter((event) => event === 'healthz 200').length >= 2, `answers in order: ${events.join(', ')}`);
});
