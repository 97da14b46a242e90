// Child process of test/config/pricing.test.ts: loads a config that starts from genai-prices with every
// way out of the process closed (fetch, sockets, DNS), and prints the resolved card and the attempts.
import dns from 'node:dns';
import net from 'node:net';
import { loadConfig } from '../../../src/config/index.ts';

const attempts: string[] = [];
globalThis.fetch = (input: unknown) => {
  attempts.push(`fetch ${String(input)}`);
  return Promise.reject(new Error('offline'));
};
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
  attempts.push(`connect ${JSON.stringify(args[0])}`);
  return (connect as (...parameters: unknown[]) => net.Socket).apply(this, args);
} as typeof connect;
const lookup = dns.lookup;
dns.lookup = ((hostname: string, ...rest: unknown[]) => {
  attempts.push(`lookup ${hostname}`);
  return (lookup as (...parameters: unknown[]) => void)(hostname, ...rest);
}) as typeof dns.lookup;

const config = loadConfig({
  env: {},
  overrides: {
    providers: { anthropic: { kind: 'anthropic', baseUrl: 'http://127.0.0.1:1' } },
    models: [
      {
        id: 'sonnet',
        provider: 'anthropic',
        capabilities: ['chat'],
        pricing: { from: 'genai-prices', provider: 'anthropic', model: 'claude-sonnet-4-5' },
      },
    ],
  },
});
// Give any update the package might schedule a chance to start before reporting.
setTimeout(() => {
  process.stdout.write(JSON.stringify({ card: config.models[0]!.pricing, attempts }));
}, 200);
