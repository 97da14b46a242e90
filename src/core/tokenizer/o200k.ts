/**
 * The o200k_base encoding, built on first use from the rank file and pre-token pattern that the
 * gpt-tokenizer package ships (`data/o200k_base.tiktoken`, `encodingParams/constants`): no download,
 * no model hub. Loading reads 3.6 MB and takes about a tenth of a second; `loadO200k()` lets the
 * server do it at start rather than on its first request.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { BytePairEncoder } from './byte-pair-encoder.ts';
import { RankTable } from './rank-table.ts';

let encoder: BytePairEncoder | undefined;

/** The o200k_base encoder (ordinary text), loaded once per process. */
export function loadO200k(): BytePairEncoder {
  if (encoder === undefined) {
    const rankFile = createRequire(import.meta.url).resolve('gpt-tokenizer/data/o200k_base.tiktoken');
    encoder = new BytePairEncoder(RankTable.fromTiktoken(readFileSync(rankFile)), O200K_TOKEN_SPLIT_REGEX);
  }
  return encoder;
}
