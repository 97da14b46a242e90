/**
 * The native side of one llama-cpp provider instance: each GGUF file loaded once, lazily, on its first
 * request, on the process-wide llama.cpp backend (llama-cpp-native.ts). Concurrent first requests share
 * the same loading promise; a failed load is forgotten so that the next request tries again after the
 * operator fixed the file.
 *
 * Each loaded model gets one context with `sequencesPerModel` sequences (see llama-cpp-sequence-pool.ts)
 * of at most `maxContextTokens` tokens each. Evaluation runs on llama.cpp's own threads through
 * node-llama-cpp's asynchronous native calls, so the event loop stays free while tokens are computed.
 */
import type { ChatWrapper, GbnfJsonSchema, Llama, LlamaContext, LlamaGrammar, LlamaModel } from 'node-llama-cpp';
import type { ProviderLogger } from '../shared/provider-context.ts';
import { loadNodeLlamaCpp, registerLlamaUser, sharedLlama, unregisterLlamaUser, type LlamaUser } from './llama-cpp-native.ts';
import { LlamaCppSequencePool } from './llama-cpp-sequence-pool.ts';

export interface LlamaCppRuntimeOptions {
  /** CPU threads llama.cpp uses for one evaluation batch (shared by all sequences of all models). */
  threads: number;
  /** Generations that may run at once per model; more wait in a queue. */
  sequencesPerModel: number;
  /** Upper bound of one sequence's context (prompt + completion), tokens; smaller when the model was trained shorter or memory is short. */
  maxContextTokens: number;
  logger?: ProviderLogger;
}

/** A GGUF model ready to generate. */
export interface LoadedLlamaCppModel {
  readonly model: LlamaModel;
  readonly context: LlamaContext;
  /** Chat wrapper resolved from the GGUF's `tokenizer.chat_template` (or architecture), generic when none matches. */
  readonly chatWrapper: ChatWrapper;
  readonly sequences: LlamaCppSequencePool;
}

/** Compiled grammars kept per runtime, keyed by the schema's JSON text. */
const GRAMMAR_CACHE_SIZE = 64;

export class LlamaCppRuntime {
  private readonly user: LlamaUser;
  private readonly models = new Map<string, Promise<LoadedLlamaCppModel>>();
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();
  private closed = false;

  constructor(private readonly options: LlamaCppRuntimeOptions) {
    this.user = { threads: options.threads, logger: options.logger };
    registerLlamaUser(this.user);
  }

  /** Loads the GGUF at `path` (once). Rejects with node-llama-cpp's error when the file is missing or broken. */
  load(path: string): Promise<LoadedLlamaCppModel> {
    if (this.closed) return Promise.reject(new Error('The llama-cpp provider is closed.'));
    let loading = this.models.get(path);
    if (loading === undefined) {
      loading = this.loadModel(path);
      this.models.set(path, loading);
      loading.catch(() => {
        if (this.models.get(path) === loading) this.models.delete(path);
      });
    }
    return loading;
  }

  /** The grammar of any JSON object (`response_format: json_object`). */
  jsonObjectGrammar(): Promise<LlamaGrammar> {
    return this.cachedGrammar('json_object', async (llama) => llama.getGrammarFor('json'));
  }

  /** A grammar for `schema` (already converted to node-llama-cpp's subset). */
  jsonSchemaGrammar(schema: GbnfJsonSchema): Promise<LlamaGrammar> {
    return this.cachedGrammar(`schema:${JSON.stringify(schema)}`, (llama) => {
      // The method's generic signature infers a literal schema type, which a schema built at run time cannot satisfy.
      const createGrammar = llama.createGrammarForJsonSchema.bind(llama) as (input: GbnfJsonSchema) => Promise<LlamaGrammar>;
      return createGrammar(schema);
    });
  }

  /** Disposes every context and model of this provider. Generations still running end with an error. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    unregisterLlamaUser(this.user);
    const loads = [...this.models.values()];
    this.models.clear();
    this.grammars.clear();
    for (const loading of loads) {
      const loaded = await loading.catch(() => undefined);
      if (loaded === undefined) continue;
      loaded.sequences.close(new Error('The llama-cpp provider is closing.'));
      await loaded.context.dispose();
      await loaded.model.dispose();
    }
  }

  private async loadModel(path: string): Promise<LoadedLlamaCppModel> {
    const llama = await sharedLlama();
    // node-llama-cpp 3.22.1 keeps a disposal lock of a model whose native load failed, so the shared
    // backend could never be disposed afterwards; it is kept for the process's life anyway.
    const model = await llama.loadModel({ modelPath: path });
    try {
      const context = await model.createContext({
        sequences: this.options.sequencesPerModel,
        contextSize: { max: this.options.maxContextTokens },
        threads: this.options.threads,
      });
      const { resolveChatWrapper, GeneralChatWrapper } = await loadNodeLlamaCpp();
      const chatWrapper = resolveChatWrapper(model, { warningLogs: false }) ?? new GeneralChatWrapper();
      const sequences = Array.from({ length: this.options.sequencesPerModel }, () => context.getSequence());
      this.options.logger?.debug(
        {
          modelPath: path,
          chatWrapper: chatWrapper.wrapperName,
          contextTokens: context.contextSize,
          sequences: sequences.length,
          threads: this.options.threads,
        },
        'llama-cpp model loaded',
      );
      if (this.closed) {
        await context.dispose();
        throw new Error('The llama-cpp provider closed while the model was loading.');
      }
      return { model, context, chatWrapper, sequences: new LlamaCppSequencePool(sequences) };
    } catch (error) {
      await model.dispose();
      throw error;
    }
  }

  private cachedGrammar(key: string, create: (llama: Llama) => Promise<LlamaGrammar>): Promise<LlamaGrammar> {
    const cached = this.grammars.get(key);
    if (cached !== undefined) {
      // Re-insert to keep the most recently used grammars at the end of the map.
      this.grammars.delete(key);
      this.grammars.set(key, cached);
      return cached;
    }
    const grammar = sharedLlama().then(create);
    this.grammars.set(key, grammar);
    grammar.catch(() => this.grammars.delete(key));
    if (this.grammars.size > GRAMMAR_CACHE_SIZE) {
      const oldest = this.grammars.keys().next().value;
      if (oldest !== undefined) this.grammars.delete(oldest);
    }
    return grammar;
  }
}
