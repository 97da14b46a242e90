/**
 * The answer the benchmarks' mock OpenAI-compatible upstream gives: `chunkCount` text deltas
 * ("Hello word1 word2 ..."), as one `chat.completion` JSON body and as the SSE stream of
 * `chat.completion.chunk` events (role chunk, deltas, finish chunk, usage chunk, `[DONE]`), in the
 * recorded wire shape. Shared by the mock upstream process and the in-process pipeline benchmark.
 */
export interface CannedChatAnswer {
  /** The non-streaming body. */
  completion: string;
  /** The whole event stream, as one string. */
  stream: string;
}

export function cannedChatAnswer(chunkCount: number, created: number): CannedChatAnswer {
  const words = Array.from({ length: chunkCount }, (_, index) => (index === 0 ? 'Hello' : ` word${index}`));
  const usage = { prompt_tokens: 12, completion_tokens: chunkCount, total_tokens: 12 + chunkCount };
  const completion = JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created,
    model: 'bench-model',
    choices: [{ index: 0, message: { role: 'assistant', content: words.join(''), refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage,
  });
  const chunk = (delta: Record<string, unknown>, finishReason: string | null, chunkUsage: unknown = null): string =>
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created, model: 'bench-model', choices: chunkUsage === null ? [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] : [], usage: chunkUsage })}\n\n`;
  const stream =
    chunk({ role: 'assistant', content: '' }, null) +
    words.map((word) => chunk({ content: word }, null)).join('') +
    chunk({}, 'stop') +
    chunk({}, null, usage) +
    'data: [DONE]\n\n';
  return { completion, stream };
}
