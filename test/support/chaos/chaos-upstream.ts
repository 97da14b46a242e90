/**
 * The chaos suite's OpenAI-compatible upstream (the mock of test/support/mock-upstreams/) with two
 * slow models, so that requests and batch lines are in flight when a fault strikes:
 * - `slow-chat`: `Mock: <prompt>` plus eight words; streamed one word every 100 ms, or one JSON body
 *   after 1 s;
 * - `batch-chat`: the same answer after `batchLatencyMs` (batch lines).
 * And the Switchyard config serving them.
 */
import { writeFileSync } from 'node:fs';
import { lastUserText, MockOpenAIServer, type MockBehaviour, type MockOpenAIReply, type RecordedRequest } from '../mock-upstreams/index.ts';

/** What `slow-chat` and `batch-chat` answer to `prompt`. */
export function slowAnswer(prompt: string): string {
  return `Mock: ${prompt} one two three four five six seven eight`;
}

export class ChaosUpstream extends MockOpenAIServer {
  constructor(private readonly batchLatencyMs: number) {
    super();
  }

  protected override defaultBehaviour(request: RecordedRequest): MockBehaviour<MockOpenAIReply> {
    const model = (request.body as { model?: string } | undefined)?.model;
    const reply = { text: slowAnswer(lastUserText(request.body)) };
    const streamed = (request.body as { stream?: boolean } | undefined)?.stream === true;
    if (model === 'slow-chat') return { type: 'reply', reply, delayMs: streamed ? 100 : 1000 };
    if (model === 'batch-chat') return { type: 'reply', reply, delayMs: this.batchLatencyMs };
    return super.defaultBehaviour(request);
  }

  /** Writes a Switchyard config serving `slow-chat` and `batch-chat` from this upstream (no bootstrap key). */
  writeConfig(path: string): void {
    writeFileSync(
      path,
      JSON.stringify({
        bootstrapKey: false,
        providers: { up: { kind: 'openai-compatible', baseUrl: `${this.url}/v1`, maxRetries: 0 } },
        models: [
          { id: 'slow-chat', provider: 'up', capabilities: ['chat', 'streaming'] },
          { id: 'batch-chat', provider: 'up', capabilities: ['chat'] },
        ],
      }),
    );
  }
}
