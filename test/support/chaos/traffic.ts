/**
 * Steady mixed traffic over the instances until stopped: several loops, each sending one request at a
 * time and alternating instances, every outcome recorded:
 * - JSON chat on `switchyard-echo` (SDK);
 * - streams in turn: chat on `switchyard-echo`, `/v1/messages`, `/v1/responses` (fetch, raw bytes);
 * - `slow-chat` on the upstream, streamed and JSON in turn (1 s each: in flight when a fault strikes);
 * - embeddings on `switchyard-embeddings` (SDK);
 * - a file uploaded to one instance (48 KB, SDK), then downloaded from the other and compared.
 * Clients call the instances directly (no balancer), as the measurement in issue 29 did.
 */
import * as requests from './requests.ts';
import type { Outcome, Target } from './requests.ts';

export const FILE_BYTES = 48 * 1024;

export class Traffic {
  readonly outcomes: Outcome[] = [];
  /** Every file an upload answered 200 for, with the sha256 of what was sent. */
  readonly files: Array<{ id: string; sha256: string }> = [];
  private running = false;
  private loops: Array<Promise<void>> = [];

  /**
   * @param origins The instances' origins. @param pauseMs Pause between two requests of a loop.
   */
  constructor(
    private readonly origins: string[],
    private readonly key: string,
    private readonly pauseMs = 150,
  ) {}

  private target(turn: number): Target {
    const instance = turn % this.origins.length;
    return { origin: this.origins[instance]!, instance, key: this.key };
  }

  private loop(offset: number, step: (turn: number) => Promise<Outcome[]>): Promise<void> {
    return (async () => {
      for (let turn = offset; this.running; turn++) {
        this.outcomes.push(...(await step(turn)));
        await new Promise((resolve) => setTimeout(resolve, this.pauseMs));
      }
    })();
  }

  start(): void {
    this.running = true;
    this.loops = [
      this.loop(0, async (turn) => [await requests.chatEcho(this.target(turn))]),
      this.loop(1, async (turn) => {
        const target = this.target(turn);
        const which = Math.floor(turn / this.origins.length) % 3;
        if (which === 0) return [await requests.stream('chat-echo-stream', 'chat', 'switchyard-echo', target)];
        if (which === 1) return [await requests.stream('messages-stream', 'messages', 'switchyard-echo', target)];
        return [await requests.stream('responses-stream', 'responses', 'switchyard-echo', target)];
      }),
      this.loop(0, async (turn) =>
        Math.floor(turn / this.origins.length) % 2 === 0
          ? [await requests.stream('chat-slow-stream', 'chat', 'slow-chat', this.target(turn))]
          : [await requests.chatSlow(this.target(turn))],
      ),
      this.loop(1, async (turn) => [await requests.embeddings(this.target(turn))]),
      this.loop(0, async (turn) => {
        const uploaded = await requests.upload(this.target(turn), FILE_BYTES);
        if (!uploaded.ok || uploaded.file === undefined) return [uploaded];
        this.files.push(uploaded.file);
        return [uploaded, await requests.download(this.target(turn + 1), uploaded.file)];
      }),
    ];
  }

  /** Stops every loop after its request in flight; resolves once all have ended. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }
}
