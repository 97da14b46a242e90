// A slow webhook endpoint adds nothing to request latency (issue 37 item 4). A real server answers
// chat completions through the official OpenAI SDK; as the budgets' settlement does, each request
// tells the runtime's spend observer that it took a fresh budget past 50, 80 and 100% (here from a
// hook that runs before the answer is sent, where settlement runs). First a baseline with no endpoint;
// then with an endpoint that holds every delivery for 10 s, so that every request of the second phase
// runs while deliveries hang. Every one of them is answered before the endpoint has answered anything,
// and their median latency stays within a small factor of the baseline's (no wall-clock bound).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { until } from '../support/until.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { spend } from '../support/alert-observations.ts';

const REQUESTS = 15;
const SLOW_MS = 10_000;

const median = (values: number[]) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)]!;

describe('a slow webhook endpoint and request latency', () => {
  let receiver: WebhookReceiver;
  let server: TestServer;
  let client: OpenAI;
  let budgets = 0;

  before(async () => {
    receiver = await startWebhookReceiver('slow', SLOW_MS);
    server = await startTestServer({
      config: {
        alerts: {
          webhooks: { allowHttp: true, allowPrivateAddresses: true, timeoutMs: 15_000 },
          delivery: { pollMs: 50, leaseMs: 30_000 },
        },
      },
      extraRoutes: (app) => {
        app.addHook('onSend', async (request, _reply, payload) => {
          if (request.url === '/v1/chat/completions') {
            server.runtime.alerts.spendObserver.observe(spend(`bud_latency_${budgets++}`, 1_000_000, { organization: 'org-latency' }));
          }
          return payload;
        });
      },
    });
    const key = await server.createKey({ organization: 'org-latency' });
    client = new OpenAI({ apiKey: key.key, baseURL: server.baseUrl, maxRetries: 0 });
  });
  after(async () => {
    // Closing aborts the deliveries still waiting on the endpoint.
    await server?.close();
    await receiver?.close();
  });

  async function timedRequests(count: number): Promise<number[]> {
    const latencies: number[] = [];
    for (let index = 0; index < count; index++) {
      const started = performance.now();
      await client.chat.completions.create({
        model: 'switchyard-echo',
        max_tokens: 8,
        messages: [{ role: 'user', content: `request ${index}` }],
      });
      latencies.push(performance.now() - started);
    }
    return latencies;
  }

  test('requests are answered while deliveries hang, as fast as without the endpoint', async () => {
    await timedRequests(3); // warm-up: connections, the model, the first alert writes
    const baseline = await timedRequests(REQUESTS);
    await server.runtime.alerts.spendObserver.flush();

    await server.runtime.alerts.endpoints.create('org-latency', { url: `${receiver.origin}/slow` }, 'test');
    await timedRequests(1);
    // From here on deliveries are hanging on the endpoint while every measured request runs.
    await until(async () => (receiver.received.length > 0 ? true : undefined), 'a delivery to reach the slow endpoint');
    const slow = await timedRequests(REQUESTS);
    const phaseEnded = Date.now();

    assert.ok(receiver.received.length >= 1);
    assert.ok(
      receiver.received.every((request) => request.answeredAt === undefined || request.answeredAt > phaseEnded),
      'every request was answered before the endpoint answered any delivery',
    );
    assert.ok(Math.max(...slow) < SLOW_MS, `no request waited for the endpoint (slowest ${Math.round(Math.max(...slow))} ms)`);
    const [baselineMedian, slowMedian] = [median(baseline), median(slow)];
    assert.ok(
      slowMedian <= baselineMedian * 5 + 100,
      `median latency with the slow endpoint ${slowMedian.toFixed(1)} ms vs ${baselineMedian.toFixed(1)} ms without it`,
    );
    // The deliveries are still pending (in flight), not dropped: the outbox holds them.
    const pending = await server.runtime.alerts.endpoints.deliveries({ scope: null, status: 'pending', limit: 100 });
    assert.ok(pending.rows.length > 0);
  });
});
