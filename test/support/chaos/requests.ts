/**
 * One client request of each kind the chaos traffic sends, each turned into an `Outcome`: status (or
 * the network error), `x-request-id`, duration until the whole body was read, whether the body is right
 * (the prompt's token echoed back, an embedding of 512 numbers, the uploaded bytes' sha256), and for
 * streams the bytes that came after the end event. JSON chat, embeddings and uploads go through the
 * official `openai` SDK; streams and downloads through fetch, to see their raw bytes.
 */
import { createHash, randomBytes } from 'node:crypto';
import OpenAI, { toFile } from 'openai';
import { slowAnswer } from './chaos-upstream.ts';
import { checkStream, type StreamFormat } from './stream-check.ts';

export type RequestKind =
  | 'chat-echo'
  | 'chat-echo-stream'
  | 'chat-slow'
  | 'chat-slow-stream'
  | 'messages-stream'
  | 'responses-stream'
  | 'embeddings'
  | 'file-upload'
  | 'file-download';

/** Kinds whose 200 answers must each have exactly one usage_ledger row. */
export const METERED_KINDS: ReadonlySet<RequestKind> = new Set([
  'chat-echo',
  'chat-echo-stream',
  'chat-slow',
  'chat-slow-stream',
  'messages-stream',
  'responses-stream',
  'embeddings',
]);

export interface Outcome {
  kind: RequestKind;
  instance: number;
  /** Epoch milliseconds. */
  start: number;
  end: number;
  durationMs: number;
  /** HTTP status, or 0 when no answer came (connection refused or reset, client timeout). */
  status: number;
  /** `error.code` (or type) of an error answer, or the network error's message. */
  error?: string | undefined;
  requestId?: string | undefined;
  /** 200 with a right and complete body. */
  ok: boolean;
  /** What was wrong with a 200 body. */
  problem?: string | undefined;
  /** Streams: bytes after the end event (must be 0). */
  bytesAfterEnd: number;
  /** Uploads: the file and the sha256 of what was sent. */
  file?: { id: string; sha256: string } | undefined;
}

/** Every request gives up after this long (the client's own timeout). */
export const CLIENT_TIMEOUT_MS = 30_000;

export interface Target {
  origin: string;
  instance: number;
  key: string;
}

type Answer = Omit<Outcome, 'kind' | 'instance' | 'start' | 'end' | 'durationMs'>;

async function timed(kind: RequestKind, target: Target, send: () => Promise<Answer>): Promise<Outcome> {
  const start = Date.now();
  let result: Answer;
  try {
    result = await send();
  } catch (error) {
    result = failure(error);
  }
  const end = Date.now();
  return { kind, instance: target.instance, start, end, durationMs: end - start, ...result };
}

function failure(error: unknown): Answer {
  if (error instanceof OpenAI.APIError && error.status !== undefined) {
    const code = (error.error as { code?: string; type?: string } | undefined) ?? {};
    return {
      status: error.status,
      error: code.code ?? code.type ?? error.message,
      requestId: error.headers?.get('x-request-id') ?? undefined,
      ok: false,
      bytesAfterEnd: 0,
    };
  }
  // The network error's code (ECONNREFUSED, ECONNRESET, ...) is somewhere down the cause chain.
  let code: string | undefined;
  for (
    let cause: unknown = error;
    cause !== undefined && cause !== null && code === undefined;
    cause = (cause as { cause?: unknown }).cause
  ) {
    code = (cause as { code?: string }).code;
  }
  const name = (error as Error).name === 'TimeoutError' || error instanceof OpenAI.APIConnectionTimeoutError ? 'client timeout' : undefined;
  return { status: 0, error: name ?? code ?? String((error as Error).message ?? error), ok: false, bytesAfterEnd: 0 };
}

function client(target: Target): OpenAI {
  return new OpenAI({ apiKey: target.key, baseURL: `${target.origin}/v1`, maxRetries: 0, timeout: CLIENT_TIMEOUT_MS });
}

function token(): string {
  return `t${randomBytes(5).toString('hex')}`;
}

/** A fetch answer that is not 200: its status, error code and request id. */
async function refused(response: Response): Promise<Answer> {
  const text = await response.text();
  let code: string | undefined;
  try {
    const error = (JSON.parse(text) as { error?: { code?: string | null; type?: string } }).error;
    code = error?.code ?? error?.type;
  } catch {
    code = text.slice(0, 80);
  }
  return {
    status: response.status,
    error: code,
    requestId: response.headers.get('x-request-id') ?? undefined,
    ok: false,
    bytesAfterEnd: 0,
  };
}

export function chatEcho(target: Target): Promise<Outcome> {
  return timed('chat-echo', target, async () => {
    const prompt = token();
    const { data, response } = await client(target)
      .chat.completions.create({ model: 'switchyard-echo', max_tokens: 16, messages: [{ role: 'user', content: prompt }] })
      .withResponse();
    const text = data.choices[0]?.message.content ?? '';
    const ok = text.includes(prompt);
    return {
      status: 200,
      requestId: response.headers.get('x-request-id') ?? undefined,
      ok,
      problem: ok ? undefined : `text ${text}`,
      bytesAfterEnd: 0,
    };
  });
}

export function chatSlow(target: Target): Promise<Outcome> {
  return timed('chat-slow', target, async () => {
    const prompt = token();
    const { data, response } = await client(target)
      .chat.completions.create({ model: 'slow-chat', messages: [{ role: 'user', content: prompt }] })
      .withResponse();
    const text = data.choices[0]?.message.content ?? '';
    const ok = text === slowAnswer(prompt);
    return {
      status: 200,
      requestId: response.headers.get('x-request-id') ?? undefined,
      ok,
      problem: ok ? undefined : `text ${text}`,
      bytesAfterEnd: 0,
    };
  });
}

const STREAM_ROUTES: Record<StreamFormat, string> = { chat: '/v1/chat/completions', messages: '/v1/messages', responses: '/v1/responses' };

function streamBody(format: StreamFormat, model: string, prompt: string): unknown {
  if (format === 'responses') return { model, stream: true, input: prompt, max_output_tokens: 32 };
  return { model, stream: true, max_tokens: 32, messages: [{ role: 'user', content: prompt }] };
}

/** A streamed request read to its last byte through fetch. */
export function stream(kind: RequestKind, format: StreamFormat, model: string, target: Target): Promise<Outcome> {
  return timed(kind, target, async () => {
    const prompt = token();
    const response = await fetch(`${target.origin}${STREAM_ROUTES[format]}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${target.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(streamBody(format, model, prompt)),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    if (response.status !== 200) return refused(response);
    const requestId = response.headers.get('x-request-id') ?? undefined;
    const checked = checkStream(format, Buffer.from(await response.arrayBuffer()));
    const expected = model === 'slow-chat' ? slowAnswer(prompt) : prompt;
    const problem = !checked.ended
      ? `no end event${checked.error === undefined ? '' : `: ${checked.error}`}`
      : checked.error !== undefined
        ? `error event: ${checked.error}`
        : !checked.text.includes(expected)
          ? `text ${checked.text}`
          : undefined;
    return {
      status: 200,
      requestId,
      ok: problem === undefined && checked.bytesAfterEnd === 0,
      problem,
      bytesAfterEnd: checked.bytesAfterEnd,
    };
  });
}

export function embeddings(target: Target): Promise<Outcome> {
  return timed('embeddings', target, async () => {
    const { data, response } = await client(target).embeddings.create({ model: 'switchyard-embeddings', input: token() }).withResponse();
    const size = data.data[0]?.embedding.length ?? 0;
    const ok = size === 512;
    return {
      status: 200,
      requestId: response.headers.get('x-request-id') ?? undefined,
      ok,
      problem: ok ? undefined : `embedding of ${size}`,
      bytesAfterEnd: 0,
    };
  });
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Uploads `bytes` random bytes (purpose user_data). */
export function upload(target: Target, bytes: number): Promise<Outcome> {
  return timed('file-upload', target, async () => {
    const content = randomBytes(bytes);
    const { data, response } = await client(target)
      .files.create({ file: await toFile(content, `${token()}.bin`), purpose: 'user_data' })
      .withResponse();
    const ok = data.bytes === bytes;
    return {
      status: 200,
      requestId: response.headers.get('x-request-id') ?? undefined,
      ok,
      problem: ok ? undefined : `bytes ${data.bytes}`,
      bytesAfterEnd: 0,
      file: { id: data.id, sha256: sha256(content) },
    };
  });
}

/** Downloads a file and compares its sha256. */
export function download(target: Target, file: { id: string; sha256: string }): Promise<Outcome> {
  return timed('file-download', target, async () => {
    const response = await fetch(`${target.origin}/v1/files/${file.id}/content`, {
      headers: { authorization: `Bearer ${target.key}` },
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    if (response.status !== 200) return refused(response);
    const got = sha256(new Uint8Array(await response.arrayBuffer()));
    const ok = got === file.sha256;
    return {
      status: 200,
      requestId: response.headers.get('x-request-id') ?? undefined,
      ok,
      problem: ok ? undefined : 'sha256 differs',
      bytesAfterEnd: 0,
    };
  });
}

/**
 * One embeddings and one echo chat request, outcomes dropped: the first embeddings request of a process
 * loads its model (seconds), which is start-up, not a dependency wait. Run before traffic reaches a new
 * process, as a balancer's slow start would.
 */
export async function warmUp(target: Target): Promise<void> {
  await embeddings(target);
  await chatEcho(target);
}
