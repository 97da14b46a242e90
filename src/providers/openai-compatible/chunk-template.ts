/**
 * A shortcut for the chunks most of a stream is made of. OpenAI-compatible servers send every text
 * delta as the same JSON text with only the delta string changed:
 *
 *   {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,
 *    "delta":{"content":"<text>"},"logprobs":null,"finish_reason":null}]}
 *
 * Parsing each of them was the largest single cost of a streamed answer (~10% of the gateway's CPU).
 * A ChunkTemplate learns the text around the delta string from one plain delta that was parsed in full
 * (shared/string-slot.ts, proved by a probe through `readChunk`) and reads a later chunk that matches it
 * without parsing: its view is the learnt view with the new string. OpenAI's own chunks also carry an
 * `obfuscation` string that changes every time; it is a free slot (any string may stand there). Any
 * other chunk (a finish reason, usage, a tool call, a server that changes another field per chunk)
 * does not match and is parsed in full.
 */
import { StringSlot } from '../shared/string-slot.ts';
import { readChunk, type OpenAIChoiceDeltaView, type OpenAIChunkView, type OpenAIToolCallDeltaView } from './openai-compatible-wire.ts';

/** The delta fields a template can carry, by their key in the wire text. */
type DeltaKey = 'content' | 'reasoning_content' | 'reasoning';

const NO_TOOL_CALLS: readonly OpenAIToolCallDeltaView[] = Object.freeze([]);
/**
 * Strings a server may change in every chunk that the view does not carry: OpenAI's `obfuscation`
 * (random padding against a length side channel, on by default on api.openai.com).
 */
const FREE_KEYS = ['obfuscation'];
/** Stops learning after this many probes in one stream (a server that changes every chunk). */
const MAX_PROBES = 4;

export class ChunkTemplate {
  private slot: StringSlot | undefined;
  private key: DeltaKey = 'content';
  private id: string | undefined;
  private model: string | undefined;
  private probes = 0;

  /** What a matched chunk's text is: the answer's text (`content`) or its reasoning. */
  get kind(): 'text' | 'reasoning' {
    return this.key === 'content' ? 'text' : 'reasoning';
  }

  /** The `id` of every chunk that matches (the learnt chunk's). */
  get chunkId(): string | undefined {
    return this.id;
  }

  /** The `model` of every chunk that matches (the learnt chunk's). */
  get chunkModel(): string | undefined {
    return this.model;
  }

  /**
   * The delta text of a chunk that matches the template (its view is `read`'s: one choice, index 0,
   * this text of `kind`, the learnt id and model, nothing else), or undefined (then parse it in full).
   * The provider's hot path: no view object is built (OpenAICompatibleStreamMapper.mapDelta).
   */
  readDelta(data: string): string | undefined {
    return this.slot?.match(data);
  }

  /** The view of a chunk that matches the template, or undefined (then parse it in full). */
  read(data: string): OpenAIChunkView | undefined {
    const text = this.readDelta(data);
    if (text === undefined) return undefined;
    const content = this.key === 'content';
    const choice: OpenAIChoiceDeltaView = {
      index: 0,
      content: content ? text : undefined,
      reasoning: content ? undefined : text,
      refusal: undefined,
      toolCalls: NO_TOOL_CALLS,
      finishReason: undefined,
    };
    return { id: this.id, model: this.model, choices: [choice], usage: undefined, error: undefined };
  }

  /** Learns from a chunk that was parsed in full (`view` is its view), when it is a plain delta. */
  learn(data: string, view: OpenAIChunkView): void {
    if (this.probes >= MAX_PROBES || !isPlainDelta(view)) return;
    const choice = view.choices[0]!;
    // An empty delta is the role announcement that opens most streams: its text is not what later chunks share.
    if (choice.content === '' || choice.reasoning === '') return;
    const key: DeltaKey | undefined = choice.content !== undefined ? 'content' : reasoningKey(data);
    if (key === undefined) return;
    this.probes++;
    // The probe must read as a plain delta of the same chunk whose text (of the kind learnt) is the
    // sentinel: then the free slots (OpenAI's `obfuscation`) reach nothing the view carries.
    const slot = StringSlot.find(
      data,
      key,
      (probe, sentinel) => {
        const probed = readChunk(probe);
        if (probed === undefined || !isPlainDelta(probed) || probed.id !== view.id || probed.model !== view.model) return false;
        return (key === 'content' ? probed.choices[0]!.content : probed.choices[0]!.reasoning) === sentinel;
      },
      FREE_KEYS,
    );
    if (slot === undefined) return;
    this.slot = slot;
    this.key = key;
    this.id = view.id;
    this.model = view.model;
  }
}

/** One choice (index 0) with text or reasoning and nothing else: no tool call, finish reason, usage or error. */
function isPlainDelta(view: OpenAIChunkView): boolean {
  if (view.choices.length !== 1 || view.usage !== undefined || view.error !== undefined) return false;
  const choice = view.choices[0]!;
  if (choice.index !== 0 || choice.refusal !== undefined || choice.toolCalls.length > 0 || choice.finishReason !== undefined) return false;
  return (choice.content === undefined) !== (choice.reasoning === undefined);
}

/** Which reasoning key the text uses; undefined when it uses both. */
function reasoningKey(data: string): DeltaKey | undefined {
  const withContent = data.includes('"reasoning_content"');
  const plain = data.includes('"reasoning"');
  return withContent === plain ? undefined : withContent ? 'reasoning_content' : 'reasoning';
}
