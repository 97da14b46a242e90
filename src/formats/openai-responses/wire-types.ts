/**
 * Types of the response-style wire format as this service sends and stores it.
 *
 * Wire documents: docs/spec.md "Response request" and "Response object" (they win), docs/wire-contracts.md
 * "Responses", and the OpenAI OpenAPI `Response`, `ResponseItem` and `ResponseStreamEvent` schemas for
 * what the SPEC leaves open (item shapes other than messages, stream payloads).
 */

/** Prefix of a reasoning item's `encrypted_content` that carries redacted reasoning rather than a signature. */
export const REDACTED_REASONING_PREFIX = 'redacted:';

/** SPEC "Response status". */
export type ResponseStatus = 'completed' | 'failed' | 'incomplete' | 'in_progress' | 'cancelled' | 'queued';

/** Status of one output or input item. */
export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface InputTextContent {
  type: 'input_text';
  text: string;
}

export interface InputImageContent {
  type: 'input_image';
  /** http(s) URL or `data:image/...;base64,...` URL. */
  image_url: string;
  detail: 'auto' | 'low' | 'high' | 'original';
}

/** A document given inline (`file_data`, a base64 data URL) or by http(s) URL (`file_url`). */
export interface InputFileContent {
  type: 'input_file';
  file_data?: string;
  file_url?: string;
  filename?: string;
}

export type InputContent = InputTextContent | InputImageContent | InputFileContent;

export interface OutputTextContent {
  type: 'output_text';
  text: string;
  /** Always empty: this service produces no citations. */
  annotations: unknown[];
}

/** A refusal part of an assistant message (sent back by clients; never produced here). */
export interface RefusalContent {
  type: 'refusal';
  refusal: string;
}

/** A user, system or developer message, as stored and listed (`input_items`). */
export interface InputMessageItem {
  /** `msg_...`: the client's id, or a new one. */
  id: string;
  type: 'message';
  role: 'user' | 'system' | 'developer';
  status: 'completed';
  content: InputContent[];
}

/** An assistant message: what the model said (output), or what a client sends back as history (input). */
export interface OutputMessageItem {
  /** `msg_` + 48 hex for output produced here. */
  id: string;
  type: 'message';
  role: 'assistant';
  status: ItemStatus;
  content: Array<OutputTextContent | RefusalContent>;
}

export interface FunctionCallItem {
  /** `fc_` + 48 hex for output produced here. */
  id: string;
  type: 'function_call';
  /** The canonical tool call id (`call_...`/`toolu_...`), verbatim: clients answer it with function_call_output. */
  call_id: string;
  name: string;
  /** Arguments as a JSON text. */
  arguments: string;
  status: ItemStatus;
}

export interface FunctionCallOutputItem {
  /** `fco_` + 48 hex unless the client gave one. */
  id: string;
  type: 'function_call_output';
  call_id: string;
  output: string | Array<InputTextContent | InputImageContent>;
  status: 'completed';
}

export interface ReasoningItem {
  /** `rs_` + 48 hex for output produced here. */
  id: string;
  type: 'reasoning';
  /** Always empty here: the full reasoning text is in `content`. */
  summary: Array<{ type: 'summary_text'; text: string }>;
  content: Array<{ type: 'reasoning_text'; text: string }>;
  /**
   * The backend's opaque integrity data for this reasoning (an Anthropic thinking signature), or
   * `redacted:<data>` for redacted reasoning; null when the backend gave none. Clients pass it back verbatim.
   */
  encrypted_content: string | null;
  status: ItemStatus;
}

/** What a response's `output` holds. */
export type ResponseOutputItem = OutputMessageItem | FunctionCallItem | ReasoningItem;

/** Every item a conversation may hold: input items (stored, listed) and output items. */
export type ResponseItem = InputMessageItem | OutputMessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem;

export interface FunctionToolEcho {
  type: 'function';
  name: string;
  description: string | null;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  strict: boolean | null;
}

export type ToolChoiceEcho = 'none' | 'auto' | 'required' | { type: 'function'; name: string };

export type TextFormatEcho =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict: boolean | null; description?: string };

export interface TextConfigEcho {
  format: TextFormatEcho;
  verbosity?: 'low' | 'medium' | 'high';
}

/** Echo of an `instructions` array entry: a message whose content is text. */
export interface InstructionMessageEcho {
  type: 'message';
  role: 'system' | 'developer';
  content: string | InputTextContent[];
}

/** The request fields a Response object echoes (SPEC "Response object": every "Echo." row). */
export interface ResponseEcho {
  instructions: string | InstructionMessageEcho[] | null;
  /** Tokens; null when the client named no maximum (`requestValidation: compatible`). */
  max_output_tokens: number | null;
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  /** `minimal` only in `requestValidation: compatible` (generated as `low`). */
  reasoning: { effort: 'minimal' | 'low' | 'medium' | 'high' | null; summary: 'auto' | 'concise' | 'detailed' | null };
  store: boolean;
  /** 0.0-1.0. */
  temperature: number;
  text: TextConfigEcho;
  tool_choice: ToolChoiceEcho;
  tools: FunctionToolEcho[];
  /** 0.0-1.0. */
  top_p: number;
  truncation: 'auto' | 'disabled';
  user: string | null;
  metadata: Record<string, string>;
}

/** All figures are token counts. */
export interface ResponseUsage {
  input_tokens: number;
  /** `cached_tokens` and `cache_write_tokens` are OpenAI's (both required by its ResponseUsage); the text and audio split is SPEC's. */
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number; text_tokens: number; audio_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number; text_tokens: number; audio_tokens: number };
  total_tokens: number;
}

/** `error` of a failed response. */
export interface ResponseErrorObject {
  /** OpenAI's response error code (`server_error`, `rate_limit_exceeded`, ...). */
  code: string;
  message: string;
  /** The SPEC error type of the failure (`server_error`, `rate_limit_exceeded`, ...). */
  type: string;
  param: string | null;
}

export interface IncompleteDetails {
  reason: 'max_output_tokens' | 'content_filter';
}

/** SPEC "Response object", field for field, in the SPEC's order. The edge adds `_metadata`. */
export interface ResponseObject {
  /** `resp_` + 48 hex. */
  id: string;
  object: 'response';
  /** Unix seconds. */
  created_at: number;
  status: ResponseStatus;
  error: ResponseErrorObject | null;
  incomplete_details: IncompleteDetails | null;
  instructions: ResponseEcho['instructions'];
  max_output_tokens: number | null;
  model: string;
  output: ResponseOutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: ResponseEcho['reasoning'];
  store: boolean;
  temperature: number;
  text: TextConfigEcho;
  tool_choice: ToolChoiceEcho;
  tools: FunctionToolEcho[];
  top_p: number;
  truncation: 'auto' | 'disabled';
  /** Null only while the response is in progress (stream lifecycle events). */
  usage: ResponseUsage | null;
  user: string | null;
  metadata: Record<string, string>;
}

/** `DELETE /v1/responses/{id}`. */
export interface ResponseDeletion {
  id: string;
  object: 'response';
  deleted: true;
}

/** `GET /v1/responses/{id}/input_items` (cursor page, docs/wire-contracts.md "List pagination"). */
export interface InputItemsPage {
  object: 'list';
  data: ResponseItem[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}
