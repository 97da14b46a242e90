/**
 * Local token counting with the o200k_base encoding (the ranks gpt-tokenizer ships, held compactly
 * by `tokenizer/`; offline). Used when a backend reports no
 * usage (figures are then marked `estimated`), for rate-limit reservations before a call, and for
 * `count_tokens`. Counts of non-OpenAI models are approximations by nature.
 *
 * Bounded work: byte-pair encoding of one pre-token is quadratic in its length, and a
 * pre-token is a whole run of letters: one 100,000-character word kept the event loop busy for
 * seconds. Runs of non-whitespace (or of whitespace) longer than MAX_RUN_LENGTH are therefore counted
 * in pieces of that length, which makes counting linear in the input; ordinary text (no run that long) is counted
 * exactly as before, and a split word costs at most about one token per piece. For very large inputs
 * `countTextTokensAsync` / `countRequestTokensAsync` also yield to the event loop between slices
 * (EVENT_LOOP_SLICE_MS), so that other requests keep being served while one huge prompt is counted.
 */
import { EventLoopSlicer } from './event-loop-slices.ts';
import { loadO200k } from './tokenizer/o200k.ts';
import type { GenerationRequest, Message } from './generation.ts';

/** Per-message framing overhead, as OpenAI's chat format counts it. */
const TOKENS_PER_MESSAGE = 3;
/** Tokens charged for one image part when its size is unknown (OpenAI low-detail figure). */
const TOKENS_PER_IMAGE = 85;
/** Longest run of non-whitespace characters handed to the tokenizer in one piece. */
export const MAX_RUN_LENGTH = 256;
/** Longest text (all of a prompt's texts together) the counters handle without yielding to the event loop, characters. */
export const ASYNC_SLICE_LENGTH = 32 * 1024;
/** Characters counted per step by the asynchronous counters (~1-2 ms here); they yield once a slice's time is used (core/event-loop-slices.ts). */
const ASYNC_STEP_LENGTH = 8 * 1024;

/** ASCII whitespace: where the tokenizer's pre-tokens (and so the counting pieces) may be cut. */
export function isWhitespace(code: number): boolean {
  return code === 32 || code === 10 || code === 13 || code === 9 || code === 12 || code === 11;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Cuts `text[start, end)` into pieces the tokenizer handles in bounded time: a piece ends wherever a
 * run of non-whitespace, or of whitespace, reaches MAX_RUN_LENGTH characters (never inside a surrogate
 * pair). `visit` returns false to stop early. Linear: every character is scanned once.
 */
function forEachPiece(text: string, start: number, end: number, visit: (pieceStart: number, pieceEnd: number) => boolean): void {
  let pieceStart = start;
  let runLength = 0;
  let runIsWhitespace = false;
  for (let index = start; index < end; index++) {
    const code = text.charCodeAt(index);
    const whitespace = isWhitespace(code);
    if (whitespace !== runIsWhitespace) {
      runIsWhitespace = whitespace;
      runLength = 0;
    }
    runLength++;
    if (runLength >= MAX_RUN_LENGTH && !isHighSurrogate(code)) {
      if (!visit(pieceStart, index + 1)) return;
      pieceStart = index + 1;
      runLength = 0;
    }
  }
  if (pieceStart < end) visit(pieceStart, end);
}

function countRange(text: string, start: number, end: number): number {
  let tokens = 0;
  forEachPiece(text, start, end, (pieceStart, pieceEnd) => {
    tokens += loadO200k().count(pieceStart === 0 && pieceEnd === text.length ? text : text.slice(pieceStart, pieceEnd));
    return true;
  });
  return tokens;
}

/**
 * The first `maxTokens` tokens of `text`, as text (a character split by the cut is dropped), in time
 * linear in the part of the text kept: pieces are encoded one after another until the budget is spent.
 */
export function truncateTextToTokens(text: string, maxTokens: number): { text: string; truncated: boolean } {
  let kept = 0;
  let keptEnd = 0;
  let cutText: string | undefined;
  forEachPiece(text, 0, text.length, (pieceStart, pieceEnd) => {
    const tokens = loadO200k().encode(text.slice(pieceStart, pieceEnd));
    if (kept + tokens.length <= maxTokens) {
      kept += tokens.length;
      keptEnd = pieceEnd;
      return true;
    }
    let partial = loadO200k().decode(tokens.slice(0, Math.max(0, maxTokens - kept)));
    while (partial.endsWith('\uFFFD')) partial = partial.slice(0, -1);
    cutText = text.slice(0, keptEnd) + partial;
    return false;
  });
  return cutText === undefined ? { text, truncated: false } : { text: cutText, truncated: true };
}

/** Loads the encoding now (about a tenth of a second) rather than on the first count. */
export function loadTokenizer(): void {
  loadO200k();
}

export function countTextTokens(text: string): number {
  return text.length === 0 ? 0 : countRange(text, 0, text.length);
}

/** Where a step of at most ASYNC_STEP_LENGTH characters from `start` may end: after a whitespace when there is one. */
function sliceEnd(text: string, start: number): number {
  const limit = start + ASYNC_STEP_LENGTH;
  if (limit >= text.length) return text.length;
  // Cut before a whitespace character (o200k attaches a leading space to the next word), searching back
  // a little; inside a long run the cut is a run piece boundary anyway.
  for (let index = limit; index > limit - MAX_RUN_LENGTH; index--) if (isWhitespace(text.charCodeAt(index))) return index;
  return isHighSurrogate(text.charCodeAt(limit - 1)) ? limit + 1 : limit;
}

/**
 * Same count as `countTextTokens` for short texts; long texts are counted in steps of about
 * ASYNC_STEP_LENGTH characters, yielding to the event loop whenever `slicer`'s slice is used up, so
 * that no request can hold the instance for longer than one slice (EVENT_LOOP_SLICE_MS).
 */
export async function countTextTokensAsync(text: string, slicer: EventLoopSlicer = new EventLoopSlicer()): Promise<number> {
  if (text.length <= ASYNC_STEP_LENGTH) return countTextTokens(text);
  let tokens = 0;
  for (let start = 0; start < text.length;) {
    const end = sliceEnd(text, start);
    tokens += countRange(text, start, end);
    start = end;
    if (start < text.length) await slicer.checkpoint();
  }
  return tokens;
}

/** What a request's prompt count is made of: texts to tokenise plus fixed framing and image tokens. */
interface PromptPieces {
  texts: string[];
  fixedTokens: number;
}

function addMessagePieces(message: Message, pieces: PromptPieces): void {
  pieces.fixedTokens += TOKENS_PER_MESSAGE;
  for (const part of message.content) {
    switch (part.type) {
      case 'text':
      case 'reasoning':
        pieces.texts.push(part.text);
        break;
      case 'image':
        pieces.fixedTokens += TOKENS_PER_IMAGE;
        break;
      case 'document':
        pieces.texts.push(part.text ?? '');
        if (part.url !== undefined && part.text === undefined) pieces.fixedTokens += TOKENS_PER_IMAGE;
        break;
      case 'tool-call':
        pieces.texts.push(part.name, part.input);
        break;
      case 'tool-result':
        if (typeof part.content === 'string') pieces.texts.push(part.content);
        else {
          for (const inner of part.content) {
            if (inner.type === 'text') pieces.texts.push(inner.text);
            else pieces.fixedTokens += TOKENS_PER_IMAGE;
          }
        }
        break;
    }
  }
}

function promptPieces(request: GenerationRequest): PromptPieces {
  const pieces: PromptPieces = { texts: [], fixedTokens: 3 }; // reply priming
  if (request.system) {
    pieces.fixedTokens += TOKENS_PER_MESSAGE;
    pieces.texts.push(request.system);
  }
  for (const message of request.messages) addMessagePieces(message, pieces);
  for (const tool of request.tools ?? []) pieces.texts.push(tool.name, tool.description ?? '', JSON.stringify(tool.inputSchema));
  if (request.responseFormat?.type === 'json_schema') pieces.texts.push(JSON.stringify(request.responseFormat.schema));
  return pieces;
}

/** Estimated prompt tokens of a canonical request: system, messages, tool definitions and response schema. */
export function countRequestTokens(request: GenerationRequest): number {
  const pieces = promptPieces(request);
  return pieces.texts.reduce((sum, text) => sum + countTextTokens(text), pieces.fixedTokens);
}

/**
 * `countRequestTokens` when the prompt's text is short enough to count without yielding (at most
 * ASYNC_SLICE_LENGTH characters in all), else undefined: then use `countRequestTokensAsync`.
 */
export function countShortRequestTokens(request: GenerationRequest): number | undefined {
  const pieces = promptPieces(request);
  let length = 0;
  for (const text of pieces.texts) length += text.length;
  if (length > ASYNC_SLICE_LENGTH) return undefined;
  let tokens = pieces.fixedTokens;
  for (const text of pieces.texts) tokens += countTextTokens(text);
  return tokens;
}

/** `countRequestTokens` that yields to the event loop while counting a large prompt (see countTextTokensAsync). */
export async function countRequestTokensAsync(request: GenerationRequest): Promise<number> {
  const pieces = promptPieces(request);
  const slicer = new EventLoopSlicer();
  let tokens = pieces.fixedTokens;
  for (const text of pieces.texts) {
    tokens += await countTextTokensAsync(text, slicer);
    // Many medium texts add up like one long one.
    await slicer.checkpoint();
  }
  return tokens;
}
