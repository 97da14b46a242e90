/**
 * Worker thread of the built-in image engine: renders one procedural picture and encodes it as PNG,
 * off the main event loop (about 0.2-0.3 s of CPU for 1024x1024). Started by
 * `image-procedural-model.ts`, which declares the message shapes (`ImageWorkerRequest`, `ImageWorkerReply`).
 */
import { parentPort } from 'node:worker_threads';
import type { ImageWorkerReply, ImageWorkerRequest } from './image-procedural-model.ts';
import { encodePngRgb } from './image-png-encoder.ts';
import { renderProceduralImage } from './image-procedural-renderer.ts';

const port = parentPort;
if (port === null) throw new Error('image-worker.ts must be started as a worker thread.');

port.on('message', (request: ImageWorkerRequest) => {
  let reply: ImageWorkerReply;
  let transfer: ArrayBuffer[] = [];
  try {
    const pixels = renderProceduralImage(request.prompt, request.width, request.height, request.variant);
    const png = encodePngRgb(request.width, request.height, pixels);
    // A copy into a buffer of its own, so that transferring it cannot detach Node's shared pool.
    const bytes = new Uint8Array(png);
    reply = { kind: 'image', jobId: request.jobId, png: bytes };
    transfer = [bytes.buffer];
  } catch (error) {
    reply = { kind: 'failed', jobId: request.jobId, message: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply, transfer);
});
