/**
 * The tiny GGUF builder writes a file that node-llama-cpp's own GGUF reader (a JavaScript parser, no
 * native code) reads back with the metadata and tensors llama.cpp needs for the llama architecture.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readGgufFileInfo } from 'node-llama-cpp';
import { buildTinyLlamaGguf, TINY_CHAT_TEMPLATE } from '../../support/tiny-gguf/build-tiny-llama.ts';

test('the tiny llama GGUF parses with its metadata, tokenizer and tensors', async () => {
  const path = buildTinyLlamaGguf();
  assert.equal(buildTinyLlamaGguf(), path, 'one parameter set maps to one cached file');
  const info = await readGgufFileInfo(path, { sourceType: 'filesystem', logWarnings: false });
  assert.equal(info.version, 3);
  const metadata = info.metadata as unknown as {
    general: { architecture: string; alignment: number };
    llama: { embedding_length: number; block_count: number; attention: { head_count: number; head_count_kv: number } };
    tokenizer: {
      ggml: { model: string; tokens: string[]; scores: number[]; token_type: number[]; bos_token_id: number; eos_token_id: number };
      chat_template: string;
    };
  };
  assert.equal(metadata.general.architecture, 'llama');
  assert.equal(metadata.general.alignment, 32);
  assert.equal(metadata.llama.embedding_length, 64);
  assert.equal(metadata.llama.block_count, 2);
  assert.equal(metadata.tokenizer.ggml.model, 'llama');
  const { tokens, scores, token_type: types } = metadata.tokenizer.ggml;
  assert.equal(scores.length, tokens.length);
  assert.equal(types.length, tokens.length);
  assert.equal(tokens[metadata.tokenizer.ggml.bos_token_id], '<s>');
  assert.equal(tokens[metadata.tokenizer.ggml.eos_token_id], '</s>');
  assert.equal(metadata.tokenizer.chat_template, TINY_CHAT_TEMPLATE);

  const tensors = new Map((info.fullTensorInfo ?? info.tensorInfo ?? []).map((tensor) => [tensor.name, tensor]));
  assert.equal(tensors.size, 2 + 2 * 9 + 1);
  assert.deepEqual(tensors.get('token_embd.weight')?.dimensions, [64, tokens.length]);
  assert.deepEqual(tensors.get('blk.1.attn_k.weight')?.dimensions, [64, 32]);
  assert.deepEqual(tensors.get('blk.0.ffn_down.weight')?.dimensions, [128, 64]);
  for (const tensor of tensors.values()) assert.equal(Number(tensor.fileOffset) % 32, 0, `${tensor.name} is aligned`);
});

test('a GGUF without a chat template is a different cached file', () => {
  assert.notEqual(buildTinyLlamaGguf({ chatTemplate: null }), buildTinyLlamaGguf());
});
