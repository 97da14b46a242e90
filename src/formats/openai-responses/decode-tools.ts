/**
 * `tools` and `tool_choice` of a `POST /v1/responses` body -> canonical tool definitions and choice, with
 * the echo the Response object carries. Only `function` tools (flat: `name`, `parameters` at the tool's
 * top level, unlike chat completions); other tool types are refused naming their type.
 */
import type { ToolChoice, ToolDefinition } from '../../core/generation.ts';
import { invalidParameter } from '../../core/service-error.ts';
import { expectObject, optionalBoolean, optionalString, requiredString, wrongType } from '../shared/request-fields.ts';
import type { FunctionToolEcho, ToolChoiceEcho } from './wire-types.ts';

/** OpenAI function and json_schema names: `^[a-zA-Z0-9_-]{1,64}$`. */
export const FUNCTION_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

export function decodeTools(value: unknown): { definitions: ToolDefinition[]; echo: FunctionToolEcho[] } {
  if (value === undefined || value === null) return { definitions: [], echo: [] };
  if (!Array.isArray(value)) throw wrongType('tools', 'an array of tools', value);
  const names = new Set<string>();
  const definitions: ToolDefinition[] = [];
  const echo: FunctionToolEcho[] = [];
  value.forEach((item, index) => {
    const param = `tools[${index}]`;
    const tool = expectObject(item, param);
    const type = requiredString(tool, 'type', `${param}.type`);
    if (type !== 'function') {
      throw invalidParameter(
        `${param}.type`,
        `Invalid '${param}.type': '${type}' tools are not supported by this service; only 'function' tools are.`,
      );
    }
    const name = requiredString(tool, 'name', `${param}.name`);
    if (!FUNCTION_NAME_PATTERN.test(name)) {
      throw invalidParameter(
        `${param}.name`,
        `Invalid '${param}.name': '${name}' must be 1 to 64 characters of a-z, A-Z, 0-9, '_' or '-'.`,
      );
    }
    if (names.has(name)) throw invalidParameter(`${param}.name`, `Invalid '${param}.name': the tool name '${name}' is defined twice.`);
    names.add(name);
    const parameters = tool['parameters'];
    // Omitting `parameters` defines a function that takes no arguments.
    const inputSchema =
      parameters === undefined || parameters === null
        ? { type: 'object', properties: {} }
        : expectObject(parameters, `${param}.parameters`);
    const definition: ToolDefinition = { name, inputSchema };
    const description = optionalString(tool, 'description', `${param}.description`);
    if (description !== undefined) definition.description = description;
    const strict = optionalBoolean(tool, 'strict', `${param}.strict`);
    if (strict !== undefined) definition.strict = strict;
    definitions.push(definition);
    echo.push({ type: 'function', name, description: description ?? null, parameters: inputSchema, strict: strict ?? null });
  });
  return { definitions, echo };
}

export function decodeToolChoice(value: unknown, tools: ToolDefinition[]): { choice?: ToolChoice; echo: ToolChoiceEcho } {
  if (value === undefined || value === null) return { echo: 'auto' };
  if (typeof value === 'string') {
    if (value === 'none') return { choice: { type: 'none' }, echo: 'none' };
    if (value === 'auto') return { choice: { type: 'auto' }, echo: 'auto' };
    if (value === 'required') {
      if (tools.length === 0)
        throw invalidParameter('tool_choice', "Invalid 'tool_choice': 'required' needs at least one tool in 'tools'.");
      return { choice: { type: 'required' }, echo: 'required' };
    }
    throw invalidParameter(
      'tool_choice',
      `Invalid 'tool_choice': '${value}' is not one of 'none', 'auto', 'required' or a {type: 'function', name} object.`,
    );
  }
  const choice = expectObject(value, 'tool_choice');
  const type = requiredString(choice, 'type', 'tool_choice.type');
  if (type !== 'function')
    throw invalidParameter('tool_choice.type', `Invalid 'tool_choice.type': only 'function' is supported, got '${type}'.`);
  const name = requiredString(choice, 'name', 'tool_choice.name');
  if (!tools.some((tool) => tool.name === name)) {
    throw invalidParameter('tool_choice.name', `Invalid 'tool_choice.name': no function named '${name}' is defined in 'tools'.`);
  }
  return { choice: { type: 'tool', name }, echo: { type: 'function', name } };
}
