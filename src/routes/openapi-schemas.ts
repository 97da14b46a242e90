/**
 * Request and response schemas of every operation in /v1/openapi.json (OpenAPI 3.1, JSON Schema 2020-12),
 * written from docs/spec.md "Resources and their fields" and the wire contracts the encoders follow. Keyed
 * by `METHOD path` as the OpenAPI document spells the path; routes/openapi.ts joins them to the routes
 * actually registered, and a test checks that every registered operation has an entry here;
 * test/e2e/openapi-answers.test.ts checks the server's own answers (and valid requests) against them.
 *
 * Request schemas state the SPEC rules (`requestValidation: spec`); `compatible` mode accepts more
 * (README "Request validation"). Unknown members are allowed unless the endpoint refuses them.
 */

import { IMAGE_QUALITIES } from '../formats/openai-images/decode-request.ts';

type Schema = Record<string, unknown>;

const string: Schema = { type: 'string' };
const integer: Schema = { type: 'integer' };
const number: Schema = { type: 'number' };
const boolean: Schema = { type: 'boolean' };
const object: Schema = { type: 'object' };
const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });
const arrayOf = (items: Schema): Schema => ({ type: 'array', items });
const enumOf = (...values: string[]): Schema => ({ type: 'string', enum: values });
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
function objectOf(properties: Record<string, Schema>, required: string[] = []): Schema {
  return required.length > 0 ? { type: 'object', properties, required } : { type: 'object', properties };
}
const stringMap: Schema = { type: 'object', additionalProperties: string };
const jsonSchemaObject: Schema = { type: 'object', description: 'A JSON Schema.' };
const withMetadata = (schema: Schema): Schema => ({ allOf: [schema, objectOf({ _metadata: ref('Metadata') })] });
const listOf = (items: Schema): Schema =>
  objectOf({ object: { const: 'list' }, data: arrayOf(items), first_id: nullable(string), last_id: nullable(string), has_more: boolean }, [
    'object',
    'data',
  ]);

/** Token prices of a price card, USD per million tokens each (README "Prices"). */
const TOKEN_PRICES: Record<string, Schema> = {
  input_per_million: number,
  output_per_million: number,
  cached_input_per_million: number,
  cache_write_5m_per_million: number,
  cache_write_1h_per_million: number,
  reasoning_per_million: number,
};

/** Shared component schemas (`#/components/schemas/...`). */
export const COMPONENT_SCHEMAS: Record<string, Schema> = {
  ErrorEnvelope: objectOf(
    {
      error: objectOf(
        { message: string, type: string, code: string, param: nullable(string), details: nullable(ref('RateLimitDetails')) },
        ['message', 'type', 'code'],
      ),
      info_metadata: ref('Metadata'),
      type: { const: 'error', description: 'Only on the message-style endpoint (Anthropic clients read it).' },
    },
    ['error', 'info_metadata'],
  ),
  RateLimitDetails: objectOf({
    limit: integer,
    remaining: integer,
    reset: nullable({ type: 'string', format: 'date-time' }),
    retry_after: nullable(integer),
    scope: { ...enumOf('organization', 'key'), description: 'Whose limit refused (budgets and organization-wide minute limits).' },
    period: {
      ...enumOf('day', 'week', 'month', 'total'),
      description: "The refusing budget's period (`budget_exceeded`; amounts in micro-USD).",
    },
  }),
  BudgetInfo: objectOf(
    {
      scope: enumOf('organization', 'key'),
      period: enumOf('day', 'week', 'month', 'total'),
      limit_micro_usd: integer,
      spent_micro_usd: integer,
      remaining_micro_usd: integer,
      reset_at: nullable({ type: 'string', format: 'date-time' }),
    },
    ['scope', 'period', 'limit_micro_usd', 'spent_micro_usd', 'remaining_micro_usd', 'reset_at'],
  ),
  Metadata: objectOf(
    {
      creator: string,
      status: boolean,
      timestamp: { type: 'string', format: 'date-time' },
      request_id: nullable(string),
      processing_time: nullable(number),
      tier: nullable(string),
      user_total_usage: nullable(ref('UsageInfo')),
      budgets: {
        ...arrayOf(ref('BudgetInfo')),
        description: 'The money budgets this request was reserved against, after it (present when any applies).',
      },
    },
    ['creator', 'status', 'timestamp'],
  ),
  UsageInfo: objectOf(
    {
      used: integer,
      limit: { type: 'integer', description: 'Token limit; 2147483647 when the tier sets no limit.' },
      remaining: { type: 'integer', description: 'Tokens left; 2147483647 when the tier sets no limit.' },
      reset_at: { type: 'string', format: 'date-time' },
    },
    ['used', 'limit', 'remaining', 'reset_at'],
  ),
  Model: objectOf(
    {
      id: string,
      object: { const: 'model' },
      created: integer,
      owned_by: string,
      description: string,
      capabilities: arrayOf(string),
      permission: arrayOf(object),
      root: string,
      parent: nullable(string),
      pricing: ref('PriceCard'),
    },
    ['id', 'object', 'created', 'owned_by', 'description', 'capabilities'],
  ),
  PriceCard: objectOf(
    {
      ...TOKEN_PRICES,
      per_request: { type: 'number', description: 'USD per backend call.' },
      per_image: { type: 'object', additionalProperties: number, description: 'USD per image by "WxH" or "WxH/quality".' },
      batch_factor: { type: 'number', description: 'Share of the price a batch line pays, 0 to 1.' },
      long_context: arrayOf(objectOf({ above_input_tokens: integer, ...TOKEN_PRICES })),
      source: nullable(objectOf({ list: string, version: string, provider: string, model: string })),
    },
    ['input_per_million', 'output_per_million', 'batch_factor'],
  ),
  File: objectOf(
    {
      id: string,
      object: { const: 'file' },
      bytes: integer,
      created_at: integer,
      expires_at: nullable(integer),
      filename: string,
      purpose: string,
      status: string,
      status_details: nullable(string),
    },
    ['id', 'object', 'bytes', 'created_at', 'filename', 'purpose'],
  ),
  Deletion: objectOf({ id: string, object: string, deleted: boolean }, ['id', 'object', 'deleted']),
  Batch: objectOf(
    {
      id: string,
      object: { const: 'batch' },
      endpoint: string,
      errors: nullable(
        objectOf({
          object: { const: 'list' },
          data: arrayOf(objectOf({ code: string, message: string, param: nullable(string), line: nullable(integer) })),
        }),
      ),
      input_file_id: string,
      completion_window: string,
      status: enumOf('validating', 'in_progress', 'finalizing', 'completed', 'failed', 'cancelling', 'canceled', 'cancelled', 'expired'),
      output_file_id: nullable(string),
      error_file_id: nullable(string),
      created_at: integer,
      in_progress_at: nullable(integer),
      expires_at: integer,
      finalizing_at: nullable(integer),
      completed_at: nullable(integer),
      failed_at: nullable(integer),
      expired_at: nullable(integer),
      cancelling_at: nullable(integer),
      cancelled_at: nullable(integer),
      request_counts: objectOf({ total: integer, completed: integer, failed: integer }, ['total', 'completed', 'failed']),
      metadata: nullable(stringMap),
    },
    ['id', 'object', 'endpoint', 'input_file_id', 'completion_window', 'status', 'created_at', 'request_counts'],
  ),
  ChatCompletionRequest: objectOf(
    {
      model: string,
      messages: arrayOf(
        objectOf(
          {
            role: enumOf('system', 'developer', 'user', 'assistant', 'tool'),
            content: nullable({ anyOf: [string, arrayOf(object)] }),
            name: string,
            tool_calls: arrayOf(object),
            tool_call_id: string,
          },
          ['role'],
        ),
      ),
      max_tokens: { type: 'integer', minimum: 1 },
      max_completion_tokens: { type: 'integer', minimum: 1 },
      temperature: { type: 'number', minimum: 0, maximum: 1 },
      top_p: { type: 'number', minimum: 0, maximum: 1 },
      stream: boolean,
      stream_options: objectOf({ include_usage: boolean }),
      stop: { anyOf: [string, arrayOf(string)] },
      tools: arrayOf(
        objectOf(
          {
            type: { const: 'function' },
            function: objectOf({ name: string, description: string, parameters: jsonSchemaObject, strict: boolean }, ['name']),
          },
          ['type', 'function'],
        ),
      ),
      tool_choice: { anyOf: [enumOf('none', 'auto', 'required'), object] },
      parallel_tool_calls: boolean,
      response_format: objectOf(
        {
          type: enumOf('text', 'json_object', 'json_schema'),
          json_schema: objectOf({ name: string, schema: jsonSchemaObject, strict: boolean, description: string }, ['name']),
        },
        ['type'],
      ),
      reasoning_effort: enumOf('none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'),
      seed: integer,
      user: string,
      metadata: stringMap,
      n: { type: 'integer', minimum: 1, maximum: 1 },
    },
    ['model', 'messages'],
  ),
  ChatCompletion: objectOf(
    {
      id: string,
      object: { const: 'chat.completion' },
      created: integer,
      model: string,
      choices: arrayOf(
        objectOf(
          {
            index: integer,
            message: objectOf(
              {
                role: { const: 'assistant' },
                content: nullable(string),
                refusal: nullable(string),
                tool_calls: arrayOf(
                  objectOf({ id: string, type: { const: 'function' }, function: objectOf({ name: string, arguments: string }) }),
                ),
                reasoning_content: string,
              },
              ['role', 'content'],
            ),
            finish_reason: enumOf('stop', 'length', 'tool_calls', 'content_filter'),
            logprobs: { type: 'null' },
          },
          ['index', 'message', 'finish_reason'],
        ),
      ),
      usage: objectOf(
        {
          prompt_tokens: integer,
          completion_tokens: integer,
          total_tokens: integer,
          prompt_tokens_details: object,
          completion_tokens_details: object,
        },
        ['prompt_tokens', 'completion_tokens', 'total_tokens'],
      ),
      system_fingerprint: string,
    },
    ['id', 'object', 'created', 'model', 'choices'],
  ),
  MessageRequest: objectOf(
    {
      model: string,
      messages: arrayOf(
        objectOf({ role: enumOf('user', 'assistant'), content: { anyOf: [string, arrayOf(objectOf({ type: string }, ['type']))] } }, [
          'role',
          'content',
        ]),
      ),
      max_tokens: { type: 'integer', minimum: 1 },
      system: { anyOf: [string, arrayOf(objectOf({ type: { const: 'text' }, text: string }, ['type', 'text']))] },
      temperature: { type: 'number', minimum: 0, maximum: 1 },
      stream: boolean,
      top_p: { type: 'number', minimum: 0, maximum: 1 },
      top_k: { type: 'integer', minimum: 1 },
      stop_sequences: arrayOf(string),
      tools: arrayOf(
        objectOf({ name: string, description: string, input_schema: jsonSchemaObject }, ['name', 'description', 'input_schema']),
      ),
      tool_choice: {
        anyOf: [
          enumOf('auto', 'any', 'none'),
          objectOf({ type: enumOf('auto', 'any', 'tool', 'none'), name: string, disable_parallel_tool_use: boolean }, ['type']),
        ],
      },
      thinking: objectOf({ type: enumOf('enabled', 'disabled'), budget_tokens: { type: 'integer', minimum: 1024 } }, ['type']),
      metadata: objectOf({ user_id: string }),
      service_tier: enumOf('auto', 'standard_only'),
      output_config: objectOf({ format: ref('JsonOutputFormat') }),
      output_format: ref('JsonOutputFormat'),
    },
    ['model', 'messages', 'max_tokens'],
  ),
  JsonOutputFormat: objectOf({ type: { const: 'json_schema' }, schema: jsonSchemaObject }, ['type', 'schema']),
  Message: objectOf(
    {
      id: string,
      type: { const: 'message' },
      role: { const: 'assistant' },
      model: string,
      content: arrayOf(
        objectOf(
          {
            type: enumOf('text', 'tool_use', 'thinking', 'redacted_thinking'),
            text: string,
            id: string,
            name: string,
            input: object,
            thinking: string,
            signature: string,
            data: string,
          },
          ['type'],
        ),
      ),
      stop_reason: nullable(enumOf('end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'refusal', 'pause_turn')),
      stop_sequence: nullable(string),
      usage: objectOf(
        {
          input_tokens: integer,
          output_tokens: integer,
          cache_creation_input_tokens: integer,
          cache_read_input_tokens: integer,
          cache_creation: objectOf({ ephemeral_5m_input_tokens: integer, ephemeral_1h_input_tokens: integer }, [
            'ephemeral_5m_input_tokens',
            'ephemeral_1h_input_tokens',
          ]),
        },
        ['input_tokens', 'output_tokens'],
      ),
    },
    ['id', 'type', 'role', 'model', 'content', 'stop_reason', 'usage'],
  ),
  ResponseRequest: objectOf(
    {
      model: string,
      input: { anyOf: [string, arrayOf(ref('ResponseItem'))] },
      max_output_tokens: { type: 'integer', minimum: 1 },
      max_tokens: { type: 'integer', minimum: 1, deprecated: true },
      instructions: { anyOf: [string, arrayOf(object)] },
      temperature: { type: 'number', minimum: 0, maximum: 1 },
      top_p: { type: 'number', minimum: 0, maximum: 1 },
      stream: boolean,
      tools: arrayOf(
        objectOf({ type: { const: 'function' }, name: string, description: string, parameters: jsonSchemaObject, strict: boolean }, [
          'type',
          'name',
        ]),
      ),
      tool_choice: {
        anyOf: [enumOf('none', 'auto', 'required'), objectOf({ type: { const: 'function' }, name: string }, ['type', 'name'])],
      },
      parallel_tool_calls: boolean,
      truncation: enumOf('auto', 'disabled'),
      user: string,
      metadata: { ...stringMap, maxProperties: 16 },
      store: boolean,
      previous_response_id: string,
      text: objectOf({
        format: objectOf(
          {
            type: enumOf('text', 'json_object', 'json_schema'),
            name: string,
            schema: jsonSchemaObject,
            strict: boolean,
            description: string,
          },
          ['type'],
        ),
        verbosity: enumOf('low', 'medium', 'high'),
      }),
      reasoning: objectOf({ effort: nullable(enumOf('low', 'medium', 'high')), summary: nullable(enumOf('auto', 'concise', 'detailed')) }),
    },
    ['model', 'input', 'max_output_tokens'],
  ),
  ResponseItem: objectOf({
    type: enumOf('message', 'function_call', 'function_call_output', 'reasoning', 'item_reference'),
    id: string,
    role: enumOf('user', 'assistant', 'system', 'developer'),
    status: enumOf('in_progress', 'completed', 'incomplete'),
    content: { anyOf: [string, arrayOf(objectOf({ type: string }, ['type']))] },
    call_id: string,
    name: string,
    arguments: string,
    output: { anyOf: [string, arrayOf(object)] },
    summary: arrayOf(object),
    encrypted_content: nullable(string),
  }),
  Response: objectOf(
    {
      id: string,
      object: { const: 'response' },
      created_at: integer,
      status: enumOf('completed', 'failed', 'incomplete', 'in_progress', 'cancelled', 'queued'),
      error: nullable(objectOf({ code: string, message: string, type: string, param: nullable(string) }, ['code', 'message'])),
      incomplete_details: nullable(objectOf({ reason: enumOf('max_output_tokens', 'content_filter') }, ['reason'])),
      instructions: nullable({ anyOf: [string, arrayOf(object)] }),
      max_output_tokens: nullable(integer),
      model: string,
      output: arrayOf(ref('ResponseItem')),
      parallel_tool_calls: boolean,
      previous_response_id: nullable(string),
      reasoning: objectOf({ effort: nullable(string), summary: nullable(string) }),
      store: boolean,
      temperature: number,
      text: object,
      tool_choice: { anyOf: [string, object] },
      tools: arrayOf(object),
      top_p: number,
      truncation: enumOf('auto', 'disabled'),
      usage: nullable(
        objectOf(
          {
            input_tokens: integer,
            input_tokens_details: objectOf({
              cached_tokens: integer,
              cache_write_tokens: integer,
              text_tokens: integer,
              audio_tokens: integer,
            }),
            output_tokens: integer,
            output_tokens_details: objectOf({ reasoning_tokens: integer, text_tokens: integer, audio_tokens: integer }),
            total_tokens: integer,
          },
          ['input_tokens', 'output_tokens', 'total_tokens'],
        ),
      ),
      user: nullable(string),
      metadata: stringMap,
    },
    ['id', 'object', 'created_at', 'status', 'model', 'output'],
  ),
  EmbeddingsRequest: objectOf(
    {
      model: string,
      input: { anyOf: [string, arrayOf(string), arrayOf(integer), arrayOf(arrayOf(integer))] },
      encoding_format: enumOf('float', 'base64'),
      dimensions: { type: 'integer', minimum: 1 },
      user: string,
    },
    ['input'],
  ),
  EmbeddingsResponse: objectOf(
    {
      object: { const: 'list' },
      data: arrayOf(
        objectOf({ object: { const: 'embedding' }, embedding: { anyOf: [arrayOf(number), string] }, index: integer }, [
          'object',
          'embedding',
          'index',
        ]),
      ),
      model: string,
      usage: objectOf({ prompt_tokens: integer, total_tokens: integer }, ['prompt_tokens', 'total_tokens']),
    },
    ['object', 'data', 'model', 'usage'],
  ),
  ModerationRequest: objectOf(
    { model: string, input: { anyOf: [string, arrayOf(string), arrayOf(objectOf({ type: string, text: string }, ['type']))] } },
    ['input'],
  ),
  ModerationResult: objectOf(
    {
      id: string,
      model: string,
      results: arrayOf(
        objectOf(
          {
            flagged: boolean,
            categories: { type: 'object', additionalProperties: boolean },
            category_scores: { type: 'object', additionalProperties: number },
            category_applied_input_types: object,
          },
          ['flagged', 'categories', 'category_scores'],
        ),
      ),
    },
    ['id', 'model', 'results'],
  ),
  ImageGenerationRequest: objectOf(
    {
      prompt: string,
      model: string,
      n: { type: 'integer', minimum: 1 },
      size: string,
      response_format: enumOf('url', 'b64_json'),
      quality: enumOf(...IMAGE_QUALITIES),
      style: string,
      user: string,
    },
    ['prompt'],
  ),
  ImagesResponse: objectOf({ created: integer, data: arrayOf(objectOf({ b64_json: string, url: string, revised_prompt: string })) }, [
    'created',
    'data',
  ]),
  KeyAuthorization: objectOf(
    {
      object: { const: 'authorization' },
      id: string,
      authorized: boolean,
      tier: string,
      permissions: arrayOf(string),
      usage_info: objectOf({ daily: ref('UsageInfo'), monthly: ref('UsageInfo') }, ['daily', 'monthly']),
      budgets: { ...arrayOf(ref('BudgetInfo')), description: 'Money budgets that apply to this key: spend, remaining and reset.' },
      organization: string,
      created: integer,
      expires: { type: ['integer', 'null'] },
    },
    ['object', 'id', 'authorized', 'tier', 'permissions', 'usage_info', 'organization', 'created'],
  ),
  CountTokensResponse: objectOf({ input_tokens: integer }, ['input_tokens']),
};

/** What one operation takes and gives, beyond path parameters (derived from the path). */
export interface OperationSchemas {
  /** JSON request body (or `multipart/form-data` when `multipart`). */
  requestBody?: Schema;
  multipart?: boolean;
  /** Query parameters, by name. */
  query?: Record<string, Schema>;
  /** 200 body; JSON unless `responseContentType` says otherwise. Server-sent events are described in text. */
  response: Schema;
  responseContentType?: string;
  /** When `stream: true` switches the answer to server-sent events. */
  streams?: boolean;
}

const pageQuery = { after: string, limit: { type: 'integer', minimum: 1 } };

export const OPERATION_SCHEMAS: Record<string, OperationSchemas> = {
  'GET /v1/openapi.json': { response: { type: 'object', description: 'This OpenAPI document.' } },
  'GET /v1/models': { response: withMetadata(objectOf({ object: { const: 'list' }, data: arrayOf(ref('Model')) }, ['object', 'data'])) },
  'GET /v1/models/{model}': { response: withMetadata(ref('Model')) },
  'GET /v1/auth/key': { response: withMetadata(ref('KeyAuthorization')) },
  'POST /v1/files': {
    multipart: true,
    requestBody: objectOf({ file: { type: 'string', contentMediaType: 'application/octet-stream' }, purpose: string }, ['file', 'purpose']),
    response: withMetadata(ref('File')),
  },
  'GET /v1/files': { query: { ...pageQuery, order: enumOf('asc', 'desc'), purpose: string }, response: withMetadata(listOf(ref('File'))) },
  'GET /v1/files/{file_id}': { response: withMetadata(ref('File')) },
  'DELETE /v1/files/{file_id}': { response: withMetadata(ref('Deletion')) },
  'GET /v1/files/{file_id}/content': {
    response: { type: 'string', description: 'The raw file bytes (JSON Lines for batch files).' },
    responseContentType: 'application/octet-stream',
  },
  'GET /v1/files/{file_id}/signed-content': {
    query: { expires: string, signature: string },
    response: { type: 'string', description: 'The raw file bytes, through a signed link (no key needed).' },
    responseContentType: 'application/octet-stream',
  },
  'POST /v1/batches': {
    requestBody: objectOf(
      {
        input_file_id: string,
        endpoint: enumOf('/v1/chat/completions', '/v1/embeddings', '/v1/responses'),
        completion_window: { const: '24h' },
        metadata: stringMap,
      },
      ['input_file_id', 'endpoint', 'completion_window'],
    ),
    response: withMetadata(ref('Batch')),
  },
  'GET /v1/batches': { query: { ...pageQuery, status: string }, response: withMetadata(listOf(ref('Batch'))) },
  'GET /v1/batches/{batch_id}': { response: withMetadata(ref('Batch')) },
  'POST /v1/batches/{batch_id}/cancel': { response: withMetadata(ref('Batch')) },
  'POST /v1/chat/completions': { requestBody: ref('ChatCompletionRequest'), response: withMetadata(ref('ChatCompletion')), streams: true },
  'POST /v1/messages': { requestBody: ref('MessageRequest'), response: withMetadata(ref('Message')), streams: true },
  'POST /v1/messages/count_tokens': {
    requestBody: {
      ...objectOf(COMPONENT_SCHEMAS['MessageRequest']!['properties'] as Record<string, Schema>, ['model', 'messages']),
      description: 'A message request; max_tokens optional, no stream.',
    },
    response: withMetadata(ref('CountTokensResponse')),
  },
  'POST /v1/responses': { requestBody: ref('ResponseRequest'), response: withMetadata(ref('Response')), streams: true },
  'GET /v1/responses/{id}': { response: withMetadata(ref('Response')) },
  'DELETE /v1/responses/{id}': { response: withMetadata(ref('Deletion')) },
  'GET /v1/responses/{id}/input_items': {
    query: { ...pageQuery, order: enumOf('asc', 'desc') },
    response: withMetadata(listOf(ref('ResponseItem'))),
  },
  'POST /v1/embeddings': { requestBody: ref('EmbeddingsRequest'), response: withMetadata(ref('EmbeddingsResponse')) },
  'POST /v1/moderations': { requestBody: ref('ModerationRequest'), response: withMetadata(ref('ModerationResult')) },
  'POST /v1/images/generations': { requestBody: ref('ImageGenerationRequest'), response: withMetadata(ref('ImagesResponse')) },
};
