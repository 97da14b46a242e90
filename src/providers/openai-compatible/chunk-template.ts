/**
 * A shortcut for the chunks most of a stream is made of. OpenAI-compatible servers send every text
 * delta as the same JSON text with only the delta string changed:
 *
 *   {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,
 *    "delta":{"content":"<text>"},"logprobs":null,"finish_reason":null}]}
 *
 * Parsing each of them builds the same object graph only to read one string out of it, and on a
 * streamed answer that parse was the largest single cost of the gateway (~10% of its CPU). A
 * ChunkTemplate learns the text around the delta string from one chunk that was parsed in full, and
 * reads a later chunk whose text is that same prefix, one JSON string literal and that same suffix
 * without parsing it: such a chunk *is* the learnt one with another string in that place, so its view
 * is the learnt view with the new string. Any other chunk (a finish reason, usage, a tool call, a
 * server that changes a field per chunk) does not match and is parsed in full, as before.
 *
 * A template is only learnt when a probe proves it: the text with a sentinel string in place of the
 * delta's value must parse to a plain delta whose text is the sentinel. Then any string literal in that
 * place reads as that string, and everything else in the view is what the learnt chunk said.
 */
import { parseJson } from '../shared/lenient-json.ts';
import { readChunk, type OpenAIChoiceDeltaView, type OpenAIChunkView, type OpenAIToolCallDeltaView } from './openai-compatible-wire.ts';

/** The delta fields a template can carry, by their key in the wire text. */
type DeltaKey = 'content' | 'reasoning_content' | 'reasoning';

const NO_TOOL_CALLS: readonly OpenAIToolCallDeltaView[] = Object.freeze([]);
/** Stops learning after this many probes in one stream (a server that changes every chunk). */
const MAX_PROBES = 4;
/** The sentinel string, and its literal in the probe's JSON text. */
const PROBE = '\u0001';
const PROBE_LITERAL = '"\\u0001"';
const QUOTE = 34;
const BACKSLASH = 92;

export class ChunkTemplate {
  private prefix = '';
  private suffix = '';
  private key: DeltaKey | undefined;
  private id: string | undefined;
  private model: string | undefined;
  private probes = 0;

  /** The view of a chunk that matches the template, or undefined (then parse it in full). */
  read(data: string): OpenAIChunkView | undefined {
    const key = this.key;
    if (key === undefined) return undefined;
    const start = this.prefix.length;
    const end = data.length - this.suffix.length;
    // The middle must be at least `""`, and the text must be exactly prefix + middle + suffix.
    if (end - start < 2 || data.charCodeAt(start) !== QUOTE || data.charCodeAt(end - 1) !== QUOTE) return undefined;
    // Compared as slices: `String.prototype.startsWith` is several times slower on these strings in V8.
    if (data.slice(0, start) !== this.prefix || data.slice(end) !== this.suffix) return undefined;
    const text = stringLiteral(data, start, end);
    if (text === undefined) return undefined;
    const choice: OpenAIChoiceDeltaView = {
      index: 0,
      content: key === 'content' ? text : undefined,
      reasoning: key === 'content' ? undefined : text,
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
    const key: DeltaKey | undefined =
      choice.content !== undefined ? 'content' : choice.reasoning !== undefined ? reasoningKey(data) : undefined;
    if (key === undefined) return;
    const literal = findValueLiteral(data, key);
    if (literal === undefined) return;
    const prefix = data.slice(0, literal.start);
    const suffix = data.slice(literal.end);
    // The probe: the same text with a sentinel in place of the string must read as that sentinel alone.
    this.probes++;
    const probe = readChunk(parseJson(prefix + PROBE_LITERAL + suffix));
    if (probe === undefined || !isPlainDelta(probe)) return;
    const probed = probe.choices[0]!;
    if ((key === 'content' ? probed.content : probed.reasoning) !== PROBE) return;
    this.prefix = prefix;
    this.suffix = suffix;
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

/**
 * Where the string value of the first `"key":` in `data` is (from its opening quote to after its
 * closing one), when that value is a string literal. The probe in `learn` checks it is the delta's.
 */
function findValueLiteral(data: string, key: DeltaKey): { start: number; end: number } | undefined {
  const quoted = `"${key}"`;
  const at = data.indexOf(quoted);
  if (at === -1) return undefined;
  let position = skipSpace(data, at + quoted.length);
  if (data.charCodeAt(position) !== 58 /* : */) return undefined;
  position = skipSpace(data, position + 1);
  if (data.charCodeAt(position) !== QUOTE) return undefined;
  for (let index = position + 1; index < data.length; index++) {
    const code = data.charCodeAt(index);
    if (code === BACKSLASH) index++;
    else if (code === QUOTE) return { start: position, end: index + 1 };
  }
  return undefined;
}

function skipSpace(data: string, from: number): number {
  let position = from;
  for (let code = data.charCodeAt(position); code === 32 || code === 9 || code === 10 || code === 13; code = data.charCodeAt(position))
    position++;
  return position;
}

/**
 * The value of the JSON string literal `data[start, end)` (quotes included), or undefined when that
 * range is not exactly one string literal. Text without escapes is sliced; the rest is left to JSON.parse.
 */
function stringLiteral(data: string, start: number, end: number): string | undefined {
  for (let index = start + 1; index < end - 1; index++) {
    const code = data.charCodeAt(index);
    if (code === QUOTE || code === BACKSLASH || code < 32) return escapedLiteral(data.slice(start, end));
  }
  return data.slice(start + 1, end - 1);
}

function escapedLiteral(literal: string): string | undefined {
  const value = parseJson(literal);
  return typeof value === 'string' ? value : undefined;
}
