/**
 * Converts canonical tool definitions into node-llama-cpp functions (node-llama-cpp 3.x,
 * `dist/types.d.ts`, `ChatModelFunctions`). The chat wrapper resolved from the GGUF renders them: in the
 * model's own tool syntax when its template has one node-llama-cpp knows, else as documentation in the
 * system prompt with node-llama-cpp's generic `||call: name({...})` syntax. The call itself (function
 * name and JSON arguments) is always generated under a grammar built from the parameter schemas, so the
 * arguments parse and follow the schema.
 *
 * - `tool_choice: none`: no functions are offered (tool calls already in the history still render).
 * - `tool_choice: required` or a named tool: node-llama-cpp cannot force a call; 400 on `tool_choice`.
 * - Parameter schemas go through the same conversion as response formats (convert-to-llama-cpp-json-schema.ts).
 */
import type { ChatModelFunctions, GbnfJsonSchema } from 'node-llama-cpp';
import type { GenerationRequest } from '../../core/generation.ts';
import { invalidParameter } from '../../core/service-error.ts';
import { convertToLlamaCppJsonSchema, SchemaConversionError } from './convert-to-llama-cpp-json-schema.ts';
import { unsupportedCapabilityError } from './llama-cpp-error.ts';

export interface ConvertedFunctions {
  functions: ChatModelFunctions;
  /** Unenforced JSON Schema keywords per tool name, for a warning log. */
  unenforcedKeywords: Record<string, string[]>;
}

/** The functions to offer, or undefined when the request offers none. */
export function convertToLlamaCppFunctions(request: GenerationRequest): ConvertedFunctions | undefined {
  const tools = request.tools ?? [];
  const choice = request.toolChoice?.type ?? 'auto';
  if (tools.length === 0 || choice === 'none') return undefined;
  if (choice === 'required' || choice === 'tool') {
    throw unsupportedCapabilityError(
      request.model,
      'tool_choice',
      "forcing a tool call (tool_choice 'required' or a named tool); use 'auto'",
    );
  }
  if (request.responseFormat !== undefined && request.responseFormat.type !== 'text') {
    throw invalidParameter(
      'response_format',
      `The model '${request.model}' runs locally with llama.cpp, which cannot combine a JSON response_format with tools.`,
    );
  }
  const functions: Record<string, { description?: string; params?: GbnfJsonSchema }> = {};
  const unenforcedKeywords: Record<string, string[]> = {};
  tools.forEach((tool, index) => {
    let params: GbnfJsonSchema;
    try {
      const converted = convertToLlamaCppJsonSchema(tool.inputSchema);
      params = converted.schema;
      if (converted.unenforcedKeywords.length > 0) unenforcedKeywords[tool.name] = converted.unenforcedKeywords;
    } catch (error) {
      if (!(error instanceof SchemaConversionError)) throw error;
      throw invalidParameter(
        `tools[${index}]`,
        `The parameters schema of tool '${tool.name}' cannot be enforced by the local model '${request.model}': ${error.message}`,
      );
    }
    functions[tool.name] = tool.description === undefined ? { params } : { description: tool.description, params };
  });
  return { functions, unenforcedKeywords };
}
