/**
 * Builds a tiny llama-architecture GGUF model for tests (no model can be downloaded here). The weights
 * are not trained but constructed, so that the output is predictable while the whole pipeline is real
 * (llama.cpp loads the file, applies the chat template, tokenizes, evaluates two transformer blocks,
 * samples, detokenizes):
 *
 * - Attention and feed-forward weights are small random values, so the residual stream is dominated by
 *   the token embedding and the model behaves as a bigram table: the next token depends on the last one.
 * - Embeddings put every token on a "background" axis, except the tokens of `script`, which each get an
 *   axis of their own; all tokens share a "bias" axis. The output matrix maps the background axis to the
 *   first script token and each script token to the next one, cycling: whatever the prompt, the model
 *   writes "The quick brown fox jumps over the lazy dog. The quick brown fox..." and never stops by
 *   itself, which makes max-token, stop-sequence and abort tests deterministic at any temperature.
 * - The bias axis gives `"` and `}` a higher logit than every other token outside the script, and `"`
 *   is followed by `"`, so grammar-constrained JSON (where the script is masked out everywhere but
 *   inside strings) writes empty strings and closes objects promptly: `{"":""}` for any JSON object.
 *
 * Tokenizer: SentencePiece-style (`tokenizer.ggml.model` = "llama"): <unk>, <s>, </s>, 256 byte-fallback
 * tokens, the chat-template control tokens, every printable ASCII character and the script's words
 * (with the prefixes SentencePiece merges them through).
 * The chat template is a small Jinja template in the style of Phi-3 that node-llama-cpp has no
 * specialised wrapper for, so its Jinja template path is exercised.
 *
 * Files are cached under os.tmpdir() keyed by a hash of the parameters and BUILDER_VERSION, and written
 * atomically (rename), so concurrent test processes share one file.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeGgufFile, type GgufTensor, type GgufValue } from './gguf-writer.ts';
import { seededRandom } from '../seeded-random.ts';

/** Bump when the file layout changes, so cached files from an older builder are not reused. */
const BUILDER_VERSION = 3;

export const TINY_CHAT_TEMPLATE =
  "{{ bos_token }}{% for message in messages %}{{ '<|' + message['role'] + '|>\\n' + message['content'] + '<|end|>\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}";

/** What the model writes, cycling forever: SentencePiece pieces (`▁` is a space). */
export const TINY_SCRIPT = ['▁The', '▁quick', '▁brown', '▁fox', '▁jumps', '▁over', '▁the', '▁lazy', '▁dog', '.'] as const;

/** The text the script detokenizes to, once (the first leading space is dropped by the tokenizer). */
export const TINY_SCRIPT_TEXT = 'The quick brown fox jumps over the lazy dog.';

export interface TinyLlamaOptions {
  /** Hidden size (`llama.embedding_length`), values per token; must exceed the script length + 2. */
  embeddingLength?: number;
  /** Transformer blocks. */
  blockCount?: number;
  /** Attention heads; `embeddingLength` must divide by it. */
  headCount?: number;
  /** Key/value heads (grouped-query attention); `headCount` must divide by it. */
  headCountKv?: number;
  /** Feed-forward hidden size. */
  feedForwardLength?: number;
  /** Training context length, tokens. */
  contextLength?: number;
  /** `tokenizer.chat_template`; null leaves it out (node-llama-cpp then falls back to a generic wrapper). */
  chatTemplate?: string | null;
  /** Seed of the pseudo-random weights. */
  seed?: number;
  /** SentencePiece pieces the model writes, cycling (default TINY_SCRIPT); each must be a distinct piece. */
  script?: readonly string[];
}

type ResolvedOptions = Required<TinyLlamaOptions>;

/** SentencePiece token types as llama.cpp reads `tokenizer.ggml.token_type`. */
const TOKEN_TYPE = { normal: 1, unknown: 2, control: 3, byte: 6 } as const;

const CONTROL_TOKENS = ['<|system|>', '<|user|>', '<|assistant|>', '<|end|>'] as const;

interface Vocabulary {
  tokens: string[];
  scores: number[];
  types: number[];
  idOf: Map<string, number>;
}

function buildVocabulary(script: readonly string[]): Vocabulary {
  const vocabulary: Vocabulary = { tokens: [], scores: [], types: [], idOf: new Map() };
  const add = (token: string, type: number, score: number): void => {
    if (vocabulary.idOf.has(token)) return;
    vocabulary.idOf.set(token, vocabulary.tokens.length);
    vocabulary.tokens.push(token);
    vocabulary.types.push(type);
    vocabulary.scores.push(score);
  };
  add('<unk>', TOKEN_TYPE.unknown, 0);
  add('<s>', TOKEN_TYPE.control, 0);
  add('</s>', TOKEN_TYPE.control, 0);
  // Byte fallback: llama.cpp encodes any character missing from the vocabulary through these.
  for (let byte = 0; byte < 256; byte++) add(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`, TOKEN_TYPE.byte, 0);
  for (const token of CONTROL_TOKENS) add(token, TOKEN_TYPE.control, 0);
  add('▁', TOKEN_TYPE.normal, -1);
  for (let code = 0x21; code <= 0x7e; code++) add(String.fromCharCode(code), TOKEN_TYPE.normal, -2);
  // SentencePiece only merges adjacent pieces into pieces of the vocabulary, so each script word needs
  // its prefixes ("▁q", "▁qu", ...) for prompt text such as an assistant prefill to tokenize into it.
  for (const piece of script) {
    for (let length = 2; length < piece.length; length++) add(piece.slice(0, length), TOKEN_TYPE.normal, -1.5);
    add(piece, TOKEN_TYPE.normal, 0);
  }
  return vocabulary;
}

function gaussianFill(random: () => number, length: number, deviation: number): Float32Array {
  const values = new Float32Array(length);
  for (let index = 0; index < length; index += 2) {
    // Box-Muller: two normal values from two uniform ones.
    const radius = Math.sqrt(-2 * Math.log(1 - random())) * deviation;
    const angle = 2 * Math.PI * random();
    values[index] = radius * Math.cos(angle);
    if (index + 1 < length) values[index + 1] = radius * Math.sin(angle);
  }
  return values;
}

function ones(length: number): Float32Array {
  return new Float32Array(length).fill(1);
}

function resolveOptions(options: TinyLlamaOptions): ResolvedOptions {
  return {
    embeddingLength: options.embeddingLength ?? 64,
    blockCount: options.blockCount ?? 2,
    headCount: options.headCount ?? 4,
    headCountKv: options.headCountKv ?? 2,
    feedForwardLength: options.feedForwardLength ?? 128,
    contextLength: options.contextLength ?? 1024,
    chatTemplate: options.chatTemplate === undefined ? TINY_CHAT_TEMPLATE : options.chatTemplate,
    seed: options.seed ?? 1,
    script: options.script ?? TINY_SCRIPT,
  };
}

/** Logit scale of the scripted next token (times ~5.7 after RMS normalisation). */
const SCRIPT_WEIGHT = 3;
/** Logit boosts of `"` and `}` over the other non-script tokens, so constrained JSON closes promptly. */
const QUOTE_WEIGHT = 0.8;
const CLOSE_BRACE_WEIGHT = 0.5;
/** Standard deviation of the random weights and of the noise on structured rows. */
const NOISE = 0.02;

function buildTensors(options: ResolvedOptions, vocabulary: Vocabulary): GgufTensor[] {
  const random = seededRandom(options.seed);
  const width = options.embeddingLength;
  const vocabularySize = vocabulary.tokens.length;
  const backgroundAxis = 0;
  const biasAxis = width - 1;
  const script = options.script;
  const scriptAxis = (index: number): number => 1 + index;
  const quoteAxis = 1 + script.length;
  if (quoteAxis + 2 > width) throw new Error('embeddingLength is too small for the script.');
  const scriptIds = script.map((piece) => vocabulary.idOf.get(piece)!);
  if (new Set(scriptIds).size !== script.length || scriptIds.includes(vocabulary.idOf.get('"')!)) {
    throw new Error('The script must be distinct pieces other than `"`.');
  }
  const quoteId = vocabulary.idOf.get('"')!;

  const embeddings = gaussianFill(random, width * vocabularySize, NOISE / 2);
  for (let token = 0; token < vocabularySize; token++) {
    const scriptIndex = scriptIds.indexOf(token);
    const axis = token === quoteId ? quoteAxis : scriptIndex === -1 ? backgroundAxis : scriptAxis(scriptIndex);
    embeddings[token * width + axis]! += 1;
    embeddings[token * width + biasAxis]! += 1;
  }

  const output = gaussianFill(random, width * vocabularySize, NOISE);
  scriptIds.forEach((token, index) => {
    // Script token `index` follows script token `index - 1`; the first follows the last and the background.
    const previousAxis = scriptAxis((index + script.length - 1) % script.length);
    output[token * width + previousAxis]! += SCRIPT_WEIGHT;
    if (index === 0) output[token * width + backgroundAxis]! += SCRIPT_WEIGHT;
  });
  // An opening quote is followed by a closing one, so strings in constrained JSON stay empty and short.
  output[quoteId * width + quoteAxis]! += SCRIPT_WEIGHT;
  output[quoteId * width + biasAxis]! += QUOTE_WEIGHT;
  output[vocabulary.idOf.get('}')! * width + biasAxis]! += CLOSE_BRACE_WEIGHT;

  const headDimension = width / options.headCount;
  const keyValueWidth = headDimension * options.headCountKv;
  const tensors: GgufTensor[] = [{ name: 'token_embd.weight', dimensions: [width, vocabularySize], data: embeddings }];
  for (let block = 0; block < options.blockCount; block++) {
    const prefix = `blk.${block}`;
    tensors.push(
      { name: `${prefix}.attn_norm.weight`, dimensions: [width], data: ones(width) },
      { name: `${prefix}.attn_q.weight`, dimensions: [width, width], data: gaussianFill(random, width * width, NOISE) },
      { name: `${prefix}.attn_k.weight`, dimensions: [width, keyValueWidth], data: gaussianFill(random, width * keyValueWidth, NOISE) },
      { name: `${prefix}.attn_v.weight`, dimensions: [width, keyValueWidth], data: gaussianFill(random, width * keyValueWidth, NOISE) },
      { name: `${prefix}.attn_output.weight`, dimensions: [width, width], data: gaussianFill(random, width * width, NOISE) },
      { name: `${prefix}.ffn_norm.weight`, dimensions: [width], data: ones(width) },
      {
        name: `${prefix}.ffn_gate.weight`,
        dimensions: [width, options.feedForwardLength],
        data: gaussianFill(random, width * options.feedForwardLength, NOISE),
      },
      {
        name: `${prefix}.ffn_up.weight`,
        dimensions: [width, options.feedForwardLength],
        data: gaussianFill(random, width * options.feedForwardLength, NOISE),
      },
      {
        name: `${prefix}.ffn_down.weight`,
        dimensions: [options.feedForwardLength, width],
        data: gaussianFill(random, options.feedForwardLength * width, NOISE),
      },
    );
  }
  tensors.push(
    { name: 'output_norm.weight', dimensions: [width], data: ones(width) },
    { name: 'output.weight', dimensions: [width, vocabularySize], data: output },
  );
  return tensors;
}

function buildMetadata(options: ResolvedOptions, vocabulary: Vocabulary): Array<readonly [string, GgufValue]> {
  const uint32 = (value: number): GgufValue => ({ type: 'uint32', value });
  const metadata: Array<readonly [string, GgufValue]> = [
    ['general.architecture', { type: 'string', value: 'llama' }],
    ['general.name', { type: 'string', value: 'switchyard-tiny-test-llama' }],
    ['general.file_type', uint32(0)], // all F32
    ['llama.context_length', uint32(options.contextLength)],
    ['llama.embedding_length', uint32(options.embeddingLength)],
    ['llama.block_count', uint32(options.blockCount)],
    ['llama.feed_forward_length', uint32(options.feedForwardLength)],
    ['llama.attention.head_count', uint32(options.headCount)],
    ['llama.attention.head_count_kv', uint32(options.headCountKv)],
    ['llama.rope.dimension_count', uint32(options.embeddingLength / options.headCount)],
    ['llama.rope.freq_base', { type: 'float32', value: 10000 }],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'float32', value: 1e-5 }],
    ['llama.vocab_size', uint32(vocabulary.tokens.length)],
    ['tokenizer.ggml.model', { type: 'string', value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: 'array', itemType: 'string', value: vocabulary.tokens }],
    ['tokenizer.ggml.scores', { type: 'array', itemType: 'float32', value: vocabulary.scores }],
    ['tokenizer.ggml.token_type', { type: 'array', itemType: 'int32', value: vocabulary.types }],
    ['tokenizer.ggml.bos_token_id', uint32(vocabulary.idOf.get('<s>')!)],
    ['tokenizer.ggml.eos_token_id', uint32(vocabulary.idOf.get('</s>')!)],
    ['tokenizer.ggml.unknown_token_id', uint32(vocabulary.idOf.get('<unk>')!)],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: true }],
    ['tokenizer.ggml.add_eos_token', { type: 'bool', value: false }],
  ];
  if (options.chatTemplate !== null) metadata.push(['tokenizer.chat_template', { type: 'string', value: options.chatTemplate }]);
  return metadata;
}

/**
 * Returns the path of a tiny llama GGUF file for these options, building it on first use (a few
 * hundred kilobytes, milliseconds to build).
 */
export function buildTinyLlamaGguf(options: TinyLlamaOptions = {}): string {
  const resolved = resolveOptions(options);
  const key = createHash('sha256')
    .update(JSON.stringify({ version: BUILDER_VERSION, ...resolved }))
    .digest('hex')
    .slice(0, 16);
  const directory = join(tmpdir(), 'switchyard-tiny-gguf');
  const path = join(directory, `tiny-llama-${key}.gguf`);
  if (existsSync(path)) return path;
  mkdirSync(directory, { recursive: true });
  const vocabulary = buildVocabulary(resolved.script);
  const partial = `${path}.${process.pid}.${Date.now()}.partial`;
  writeGgufFile(partial, buildMetadata(resolved, vocabulary), buildTensors(resolved, vocabulary));
  renameSync(partial, path);
  return path;
}
