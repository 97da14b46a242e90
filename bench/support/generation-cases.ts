/**
 * The requests the gateway benchmarks send for each generation format: the same short prompt and a
 * 64-token cap, to the model `bench-model` (served by the mock upstream).
 */
export interface GenerationCase {
  format: 'chat completions' | 'messages' | 'responses';
  path: '/v1/chat/completions' | '/v1/messages' | '/v1/responses';
  /** The request body, JSON or streamed. */
  body: (stream: boolean) => string;
}

const PROMPT = 'Say hello in twenty words.';

export const GENERATION_CASES: readonly GenerationCase[] = [
  {
    format: 'chat completions',
    path: '/v1/chat/completions',
    body: (stream) => JSON.stringify({ model: 'bench-model', max_tokens: 64, stream, messages: [{ role: 'user', content: PROMPT }] }),
  },
  {
    format: 'messages',
    path: '/v1/messages',
    body: (stream) => JSON.stringify({ model: 'bench-model', max_tokens: 64, stream, messages: [{ role: 'user', content: PROMPT }] }),
  },
  {
    format: 'responses',
    path: '/v1/responses',
    body: (stream) => JSON.stringify({ model: 'bench-model', max_output_tokens: 64, stream, store: false, input: PROMPT }),
  },
];
