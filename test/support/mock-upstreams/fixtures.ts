/**
 * Loads recorded upstream data from test/fixtures/providers/ (see the README there) as events the
 * mock upstreams replay.
 */
import { readFileSync } from 'node:fs';
import type { MockSseEvent } from './mock-upstream-server.ts';

const FIXTURES = new URL('../../fixtures/providers/', import.meta.url);

/** The JSON payloads of a `<name>.chunks.txt` fixture, one per line. */
export function readChunkFixture(name: string): unknown[] {
  return readFileSync(new URL(`${name}.chunks.txt`, FIXTURES), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as unknown);
}

/** A whole-body `<name>.json` fixture. */
export function readJsonFixture(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as unknown;
}

/** A chat completions stream fixture as SSE events: `data:` lines only, then `data: [DONE]`. */
export function openAIFixtureEvents(name: string): MockSseEvent[] {
  return [...readChunkFixture(name).map((data) => ({ data })), { data: '[DONE]' }];
}

/** A Messages stream fixture as SSE events: each with `event: <its type>`, as Anthropic sends them. */
export function anthropicFixtureEvents(name: string): MockSseEvent[] {
  return readChunkFixture(name).map((data) => ({ event: String((data as { type?: unknown }).type), data }));
}
