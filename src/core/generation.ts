/**
 * The canonical generation request: what every client format decodes into and every provider consumes.
 * It is the union of what chat completions, messages and responses can say (docs/design.md "Why a canonical
 * core"). A provider that cannot honour a field reports it as a `GenerationWarning` or rejects it with a
 * 400 ServiceError; it never drops it silently.
 */

export interface TextPart {
  type: 'text';
  text: string;
}

/** An image, either by URL (http(s) or `data:` URL) or as inline base64 bytes. */
export interface ImagePart {
  type: 'image';
  /** http(s) URL or `data:<mediaType>;base64,...` URL. */
  url: string;
  /** Media type when known (`image/png`, ...). */
  mediaType?: string;
  /** OpenAI `detail` hint: `auto`, `low` or `high`. */
  detail?: 'auto' | 'low' | 'high';
}

/** A document (PDF or plain text), by URL or inline base64 data, as Anthropic `document` blocks carry it. */
export interface DocumentPart {
  type: 'document';
  /** http(s) URL or `data:` URL, or undefined when `text` carries the document. */
  url?: string;
  /** Plain-text document body. */
  text?: string;
  mediaType?: string;
  title?: string;
}

export type UserContentPart = TextPart | ImagePart | DocumentPart;

/** Model reasoning ("thinking"). `signature` is the backend's opaque integrity token, passed back verbatim. */
export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  signature?: string;
  /** Anthropic `redacted_thinking` data: opaque, passed back verbatim. */
  redactedData?: string;
}

/** A call the model made to a tool. `input` is the JSON text of the arguments (may be `{}`). */
export interface ToolCallPart {
  type: 'tool-call';
  /** Call id as the client sees it (`call_...` / `toolu_...`); kept verbatim across formats. */
  id: string;
  name: string;
  /** Arguments as a JSON text. */
  input: string;
}

export type AssistantContentPart = TextPart | ReasoningPart | ToolCallPart;

/** The result of a tool call, sent back by the client. */
export interface ToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  /** Tool name when the format carries it (responses/chat do not always). */
  toolName?: string;
  content: string | Array<TextPart | ImagePart>;
  isError?: boolean;
}

export type Message =
  | { role: 'user'; content: UserContentPart[] }
  | { role: 'assistant'; content: AssistantContentPart[] }
  | { role: 'tool'; content: ToolResultPart[] };

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the tool input (an object schema). */
  inputSchema: Record<string, unknown>;
  /** OpenAI `strict` function flag. */
  strict?: boolean;
}

export type ToolChoice =
  | { type: 'auto' }
  | { type: 'none' }
  /** The model must call some tool (`required` / Anthropic `any`). */
  | { type: 'required' }
  | { type: 'tool'; name: string };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean; description?: string };

export interface GenerationRequest {
  /** Public model id as the client asked for it (after alias resolution: the catalogue id). */
  model: string;
  /** System instructions, already joined into one text. */
  system?: string;
  messages: Message[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  /** Whether several tool calls may come in one turn. */
  parallelToolCalls?: boolean;
  /** 0.0-1.0 per SPEC. */
  temperature?: number;
  /** 0.0-1.0 per SPEC. */
  topP?: number;
  /** > 0. */
  topK?: number;
  /** Maximum completion tokens, >= 1. */
  maxOutputTokens?: number;
  stopSequences?: string[];
  responseFormat?: ResponseFormat;
  /** Extended thinking budget in tokens (Anthropic `thinking.budget_tokens`, responses `reasoning.effort`). */
  thinking?: { budgetTokens: number };
  /** Reasoning effort as the client said it (responses/chat `reasoning_effort`), for backends that take it. */
  reasoningEffort?: 'low' | 'medium' | 'high';
  /** Caller metadata, string values. */
  metadata?: Record<string, string>;
  /** End-user identifier. */
  user?: string;
  /** Sampling seed, passed through where the backend supports it. */
  seed?: number;
}

/** Why generation ended, in canonical terms. Formats map these to their own spellings. */
export type FinishReason = 'stop' | 'length' | 'stop-sequence' | 'tool-calls' | 'content-filter' | 'error';

/** Canonical names of the request settings a backend may not honour (formats map them to wire names). */
export type GenerationSetting =
  | 'temperature'
  | 'topP'
  | 'topK'
  | 'maxOutputTokens'
  | 'stopSequences'
  | 'seed'
  | 'metadata'
  | 'user'
  | 'parallelToolCalls'
  | 'reasoningEffort'
  | 'thinking'
  | 'responseFormat'
  | 'toolChoice';

/** A request setting the backend did not honour; reported to the client in a header and logged. */
export interface GenerationWarning {
  setting: GenerationSetting;
  /** `unsupported`: the backend has no such setting; `refused-with-thinking`: the backend refuses it while thinking is on. */
  reason: 'unsupported' | 'refused-with-thinking';
}
