/**
 * `echo`: the deterministic reference chat engine. It is NOT a language model: it answers by echoing,
 * so that every text endpoint works offline and tests can predict every byte. The same request always
 * gives the same parts (only tool-call ids are derived from the request, never random).
 *
 * Behaviour, in order of precedence:
 * - tool choice `required` or a named tool: one well-formed tool call (`required` with several tools
 *   and parallel calls allowed: one call per tool, in order); arguments are built from the tool's
 *   input schema (required properties, strings taken from the user's text); finish `tool-calls`;
 * - JSON output: `json_object` -> `{"echo": <text>}`; `json_schema` -> a document conforming to the
 *   schema (see sample-from-json-schema.ts);
 * - otherwise `Echo: <text>` (images and documents of the message are counted, not described).
 * `<text>` is the text of the last user turn (or of the tool results when the conversation ends with
 * them). Stop sequences cut the answer before the first match (finish `stop-sequence`); the output
 * cap counts the o200k tokens of the answer and cuts there (finish `length`). When thinking is
 * asked for (a budget or an effort), a short reasoning block with a deterministic signature comes
 * first. Usage is counted with core/count-tokens.ts and is exact for this engine (`estimated: false`).
 * The answer streams in word-sized deltas and yields to the event loop between batches of parts.
 */
import { createHash } from 'node:crypto';
import { countRequestTokens, countTextTokens, truncateTextToTokens } from '../../../core/count-tokens.ts';
import type { FinishReason, GenerationRequest, Message, ToolDefinition } from '../../../core/generation.ts';
import type { CallOptions, LanguageModel } from '../../../core/language-model.ts';
import { invalidParameter } from '../../../core/service-error.ts';
import type { StreamPart } from '../../../core/stream-parts.ts';
import { sampleFromJsonSchema } from './sample-from-json-schema.ts';

/** Prefix of every plain-text answer. */
export const ECHO_PREFIX = 'Echo: ';
/** Most text deltas one answer is split into; longer answers get several words per delta. */
const MAX_TEXT_DELTAS = 256;
/** Parts yielded between two returns to the event loop. */
const PARTS_PER_TURN = 16;
/** Most characters of the user's text quoted in the reasoning block. */
const REASONING_QUOTE_LENGTH = 200;

interface PlannedToolCall {
  id: string;
  name: string;
  input: string;
}

/** Everything the engine will say, decided before the first part is sent. */
export interface EchoPlan {
  reasoning: { text: string; signature: string } | undefined;
  text: string | undefined;
  toolCalls: PlannedToolCall[];
  finishReason: FinishReason;
  stopSequence: string | null;
}

function describeAttachments(message: Message): string {
  let images = 0;
  let documents = 0;
  for (const part of message.content) {
    if (part.type === 'image') images++;
    else if (part.type === 'document') documents++;
  }
  const notes: string[] = [];
  if (images > 0) notes.push(`${images} image${images === 1 ? '' : 's'}`);
  if (documents > 0) notes.push(`${documents} document${documents === 1 ? '' : 's'}`);
  return notes.length === 0 ? '' : ` [${notes.join(', ')}]`;
}

/** The text the engine echoes: the last user turn, or the tool results that end the conversation. */
export function echoSource(request: GenerationRequest): { text: string; attachments: string } {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') {
    const text = last.content
      .map((result) =>
        typeof result.content === 'string'
          ? result.content
          : result.content.map((inner) => (inner.type === 'text' ? inner.text : '')).join(''),
      )
      .join('\n');
    return { text, attachments: '' };
  }
  for (let index = request.messages.length - 1; index >= 0; index--) {
    const message = request.messages[index]!;
    if (message.role !== 'user') continue;
    const text = message.content
      .map((part) => (part.type === 'text' ? part.text : ''))
      .filter((part) => part !== '')
      .join('\n');
    return { text, attachments: describeAttachments(message) };
  }
  return { text: '', attachments: '' };
}

function deterministicToolCallId(request: GenerationRequest, position: number, name: string): string {
  const digest = createHash('sha256')
    .update(`${request.messages.length}:${position}:${name}:${JSON.stringify(request.messages.at(-1) ?? null)}`)
    .digest('hex');
  return `call_${digest.slice(0, 24)}`;
}

function toolsToCall(request: GenerationRequest): ToolDefinition[] {
  const choice = request.toolChoice;
  const tools = request.tools ?? [];
  if (choice?.type === 'tool') {
    const tool = tools.find((candidate) => candidate.name === choice.name);
    if (tool === undefined)
      throw invalidParameter('tool_choice', `tool_choice names the tool '${choice.name}', which is not among the tools given.`);
    return [tool];
  }
  if (choice?.type === 'required') {
    if (tools.length === 0) throw invalidParameter('tool_choice', 'tool_choice requires a tool call, but no tools were given.');
    return request.parallelToolCalls === false ? tools.slice(0, 1) : tools;
  }
  return [];
}

/** Cuts at the earliest stop sequence (the longest one when several match there). */
function applyStopSequences(text: string, stopSequences: readonly string[]): { text: string; matched: string | null } {
  let cut = -1;
  let matched: string | null = null;
  for (const sequence of stopSequences) {
    if (sequence === '') continue;
    const index = text.indexOf(sequence);
    if (index === -1) continue;
    if (cut === -1 || index < cut || (index === cut && sequence.length > (matched?.length ?? 0))) {
      cut = index;
      matched = sequence;
    }
  }
  return cut === -1 ? { text, matched: null } : { text: text.slice(0, cut), matched };
}

export function planEchoAnswer(request: GenerationRequest): EchoPlan {
  const source = echoSource(request);
  const thinkingRequested = request.thinking !== undefined || request.reasoningEffort !== undefined;
  let reasoning: EchoPlan['reasoning'];
  if (thinkingRequested) {
    const quote = source.text.length > REASONING_QUOTE_LENGTH ? `${source.text.slice(0, REASONING_QUOTE_LENGTH)}…` : source.text;
    const text = `The user wrote ${countTextTokens(source.text)} tokens: "${quote}". I will echo them back.`;
    const signature = createHash('sha256').update(`switchyard-echo-reasoning:${text}`).digest('base64');
    reasoning = { text, signature };
  }

  const tools = toolsToCall(request);
  if (tools.length > 0) {
    const toolCalls = tools.map((tool, position) => ({
      id: deterministicToolCallId(request, position, tool.name),
      name: tool.name,
      input: JSON.stringify(sampleFromJsonSchema(tool.inputSchema, source.text) ?? {}),
    }));
    return { reasoning, text: undefined, toolCalls, finishReason: 'tool-calls', stopSequence: null };
  }

  let answer: string;
  const format = request.responseFormat;
  if (format?.type === 'json_object') answer = JSON.stringify({ echo: source.text });
  else if (format?.type === 'json_schema') answer = JSON.stringify(sampleFromJsonSchema(format.schema, source.text));
  else answer = `${ECHO_PREFIX}${source.text}${source.attachments}`;

  const stopped = applyStopSequences(answer, request.stopSequences ?? []);
  let finishReason: FinishReason = stopped.matched === null ? 'stop' : 'stop-sequence';
  let stopSequence = stopped.matched;
  let text = stopped.text;
  if (request.maxOutputTokens !== undefined) {
    const cut = truncateTextToTokens(text, request.maxOutputTokens);
    if (cut.truncated) {
      text = cut.text;
      finishReason = 'length';
      stopSequence = null;
    }
  }
  return { reasoning, text, toolCalls: [], finishReason, stopSequence };
}

/** Splits text into word-sized pieces (leading whitespace attached) whose concatenation is the text. */
export function splitIntoWords(text: string): string[] {
  const words = text.match(/\s*\S+|\s+$/g) ?? (text === '' ? [] : [text]);
  if (words.length <= MAX_TEXT_DELTAS) return words;
  const perDelta = Math.ceil(words.length / MAX_TEXT_DELTAS);
  const grouped: string[] = [];
  for (let index = 0; index < words.length; index += perDelta) grouped.push(words.slice(index, index + perDelta).join(''));
  return grouped;
}

/** Splits a JSON text into a few fragments, as real backends stream tool arguments. */
function splitIntoFragments(text: string, fragments: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / fragments));
  const pieces: string[] = [];
  for (let index = 0; index < text.length; index += size) pieces.push(text.slice(index, index + size));
  return pieces;
}

function planToParts(plan: EchoPlan, request: GenerationRequest): StreamPart[] {
  const parts: StreamPart[] = [{ type: 'response-metadata', upstreamModel: 'echo' }];
  let outputTokens = 0;
  let reasoningTokens = 0;
  if (plan.reasoning !== undefined) {
    const id = 'reasoning-0';
    parts.push({ type: 'reasoning-start', id });
    for (const word of splitIntoWords(plan.reasoning.text)) parts.push({ type: 'reasoning-delta', id, delta: word });
    parts.push({ type: 'reasoning-signature', id, signature: plan.reasoning.signature });
    parts.push({ type: 'reasoning-end', id });
    reasoningTokens = countTextTokens(plan.reasoning.text);
    outputTokens += reasoningTokens;
  }
  if (plan.text !== undefined) {
    const id = 'text-0';
    parts.push({ type: 'text-start', id });
    for (const word of splitIntoWords(plan.text)) parts.push({ type: 'text-delta', id, delta: word });
    parts.push({ type: 'text-end', id });
    outputTokens += countTextTokens(plan.text);
  }
  for (const call of plan.toolCalls) {
    parts.push({ type: 'tool-input-start', id: call.id, toolName: call.name });
    for (const fragment of splitIntoFragments(call.input, 3)) parts.push({ type: 'tool-input-delta', id: call.id, delta: fragment });
    parts.push({ type: 'tool-input-end', id: call.id });
    outputTokens += countTextTokens(call.name) + countTextTokens(call.input);
  }
  parts.push({
    type: 'finish',
    finishReason: plan.finishReason,
    stopSequence: plan.stopSequence,
    usage: {
      inputTokens: countRequestTokens(request),
      cachedInputTokens: 0,
      cacheWriteInputTokens: 0,
      cacheWrite1hInputTokens: 0,
      outputTokens,
      reasoningTokens,
      requests: 1,
      estimated: false,
    },
  });
  return parts;
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class EchoLanguageModel implements LanguageModel {
  async *stream(request: GenerationRequest, options: CallOptions): AsyncGenerator<StreamPart, void, undefined> {
    const parts = planToParts(planEchoAnswer(request), request);
    for (let index = 0; index < parts.length; index++) {
      if (index % PARTS_PER_TURN === 0) await nextTurn();
      if (options.signal.aborted) throw options.signal.reason;
      yield parts[index]!;
    }
  }
}
