/**
 * The built-in `ImageModel`: deterministic procedural PNGs seeded by the prompt
 * (`image-procedural-renderer.ts`), rendered in a worker thread (`image-worker.ts`) so that a request
 * for ten 1024x1024 images does not stall other requests. It is a development engine, not a generative
 * model; the catalogue says so.
 *
 * The worker starts on the first request and is kept; an idle worker does not keep the process alive.
 * Image `i` of a request is variant `i` of the prompt: the n images differ from each other, and the
 * same request always gives the same images.
 */
import type { Worker } from 'node:worker_threads';
import type { CallOptions, GeneratedImage, ImageGenerationRequest, ImageModel } from '../../../core/language-model.ts';
import { invalidParameter, serverError } from '../../../core/service-error.ts';
import { startWorkerThread } from '../start-worker-thread.ts';

/** Main thread -> worker: render one image. */
export interface ImageWorkerRequest {
  jobId: number;
  prompt: string;
  /** Pixels. */
  width: number;
  /** Pixels. */
  height: number;
  /** 0-based index of the image within the request. */
  variant: number;
}

/** Worker -> main thread. `png` is a complete PNG file. */
export type ImageWorkerReply = { kind: 'image'; jobId: number; png: Uint8Array } | { kind: 'failed'; jobId: number; message: string };

/** Smallest and largest side the renderer accepts, pixels. */
export const PROCEDURAL_IMAGE_MIN_SIDE = 16;
export const PROCEDURAL_IMAGE_MAX_SIDE = 2048;

/** Parses `WxH` (e.g. `512x512`) into pixels; throws a 400 with param `size` when malformed or out of range. */
export function parseImageSize(size: string): { width: number; height: number } {
  const match = /^(\d{1,5})x(\d{1,5})$/.exec(size);
  const width = Number(match?.[1]);
  const height = Number(match?.[2]);
  if (match === null || [width, height].some((side) => side < PROCEDURAL_IMAGE_MIN_SIDE || side > PROCEDURAL_IMAGE_MAX_SIDE)) {
    throw invalidParameter(
      'size',
      `'size' must be WIDTHxHEIGHT with sides from ${PROCEDURAL_IMAGE_MIN_SIDE} to ${PROCEDURAL_IMAGE_MAX_SIDE} pixels, e.g. '1024x1024'.`,
    );
  }
  return { width, height };
}

interface PendingImage {
  resolve(png: Uint8Array): void;
  reject(error: unknown): void;
}

export interface ProceduralImageModel extends ImageModel {
  /** Stops the worker; pending requests get a 500 `service_unavailable`. */
  close(): Promise<void>;
}

export function createBuiltinImageModel(): ProceduralImageModel {
  let worker: Worker | null = null;
  let nextJobId = 1;
  const pending = new Map<number, PendingImage>();

  const failAll = (error: unknown): void => {
    for (const job of pending.values()) job.reject(error);
    pending.clear();
  };

  const updateReference = (): void => {
    if (worker === null) return;
    if (pending.size > 0) worker.ref();
    else worker.unref();
  };

  const ensureWorker = (): Worker => {
    if (worker !== null) return worker;
    const started = startWorkerThread('image-worker', import.meta.url);
    worker = started;
    const discard = (cause?: unknown): void => {
      if (worker !== started) return;
      worker = null;
      void started.terminate();
      failAll(serverError('service_unavailable', 'The built-in image engine stopped unexpectedly.', cause));
    };
    started.on('message', (reply: ImageWorkerReply) => {
      const job = pending.get(reply.jobId);
      if (job === undefined) return;
      pending.delete(reply.jobId);
      if (reply.kind === 'image') job.resolve(reply.png);
      else job.reject(serverError('internal_error', `The built-in image engine failed: ${reply.message}`));
      updateReference();
    });
    started.on('error', discard);
    started.on('exit', () => discard());
    return started;
  };

  const renderOne = (prompt: string, width: number, height: number, variant: number): Promise<Uint8Array> =>
    new Promise<Uint8Array>((resolve, reject) => {
      const jobId = nextJobId++;
      pending.set(jobId, { resolve, reject });
      ensureWorker().postMessage({ jobId, prompt, width, height, variant } satisfies ImageWorkerRequest);
      updateReference();
    });

  return {
    async generate(request: ImageGenerationRequest, options: CallOptions): Promise<GeneratedImage[]> {
      const { width, height } = parseImageSize(request.size);
      if (!Number.isInteger(request.n) || request.n < 1 || request.n > 10)
        throw invalidParameter('n', "'n' must be an integer from 1 to 10.");
      if (options.signal.aborted) throw options.signal.reason;
      // The worker renders one image at a time; an aborted request stops waiting at once.
      const images = Promise.all(Array.from({ length: request.n }, (_, variant) => renderOne(request.prompt, width, height, variant)));
      const aborted = new Promise<never>((_, reject) => {
        const onAbort = (): void => reject(options.signal.reason);
        options.signal.addEventListener('abort', onAbort, { once: true });
        void images.finally(() => options.signal.removeEventListener('abort', onAbort)).catch(() => undefined);
      });
      const pngs = await Promise.race([images, aborted]);
      return pngs.map((png) => ({ bytes: Buffer.from(png.buffer, png.byteOffset, png.byteLength), mediaType: 'image/png' }));
    },
    async close(): Promise<void> {
      const running = worker;
      worker = null;
      failAll(serverError('service_unavailable', 'The built-in image engine is shutting down.'));
      if (running !== null) await running.terminate();
    },
  };
}
