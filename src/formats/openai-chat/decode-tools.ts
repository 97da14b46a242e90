/**
 * `tools` and `tool_choice` of a chat completions body -> canonical tool definitions and choice. Only
 * `function` tools (`{type: 'function', function: {name, parameters, description?, strict?}}`).
 */
import type { ToolChoice, ToolDefinition } from '../../core/generation.ts';
import { invalidParameter, missingParameter } from '../../core/service-error.ts';
import { expectObject, optionalBoolean, optionalString, requiredString, wrongType } from '../shared/request-fields.ts';

/** OpenAI function and json_schema names: `^[a-zA-Z0-9_-]{1,64}$`. */
export const FUNCTION_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

export function decodeTools(value: unknown): ToolDefinition[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw wrongType('tools', 'an array of tools', value);
  const names = new Set<string>();
  const tools = value.map((item, index): ToolDefinition => {
    const param = `tools[${index}]`;
    const tool = expectObject(item, param);
    const type = requiredString(tool, 'type', `${param}.type`);
    if (type !== 'function')
      throw invalidParameter(`${param}.type`, `Invalid '${param}.type': only 'function' tools are supported, got '${type}'.`);
    const functionValue = tool['function'];
    if (functionValue === undefined || functionValue === null) throw missingParameter(`${param}.function`);
    const fn = expectObject(functionValue, `${param}.function`);
    const name = requiredString(fn, 'name', `${param}.function.name`);
    if (!FUNCTION_NAME_PATTERN.test(name)) {
      throw invalidParameter(
        `${param}.function.name`,
        `Invalid '${param}.function.name': '${name}' must be 1 to 64 characters of a-z, A-Z, 0-9, '_' or '-'.`,
      );
    }
    if (names.has(name))
      throw invalidParameter(`${param}.function.name`, `Invalid '${param}.function.name': the tool name '${name}' is defined twice.`);
    names.add(name);
    const parameters = fn['parameters'];
    let inputSchema: Record<string, unknown>;
    // OpenAI: omitting `parameters` defines a function that takes no arguments.
    if (parameters === undefined || parameters === null) inputSchema = { type: 'object', properties: {} };
    else inputSchema = expectObject(parameters, `${param}.function.parameters`);
    const definition: ToolDefinition = { name, inputSchema };
    const description = optionalString(fn, 'description', `${param}.function.description`);
    if (description !== undefined) definition.description = description;
    const strict = optionalBoolean(fn, 'strict', `${param}.function.strict`);
    if (strict !== undefined) definition.strict = strict;
    return definition;
  });
  return tools.length > 0 ? tools : undefined;
}

export function decodeToolChoice(value: unknown, tools: ToolDefinition[] | undefined): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    if (value === 'none') return { type: 'none' };
    if (value === 'auto') return { type: 'auto' };
    if (value === 'required') {
      if (tools === undefined)
        throw invalidParameter('tool_choice', "Invalid 'tool_choice': 'required' needs at least one tool in 'tools'.");
      return { type: 'required' };
    }
    throw invalidParameter(
      'tool_choice',
      `Invalid 'tool_choice': '${value}' is not one of 'none', 'auto', 'required' or a {type: 'function'} object.`,
    );
  }
  const choice = expectObject(value, 'tool_choice');
  const type = requiredString(choice, 'type', 'tool_choice.type');
  if (type !== 'function')
    throw invalidParameter('tool_choice.type', `Invalid 'tool_choice.type': only 'function' is supported, got '${type}'.`);
  const functionValue = choice['function'];
  if (functionValue === undefined || functionValue === null) throw missingParameter('tool_choice.function');
  const fn = expectObject(functionValue, 'tool_choice.function');
  const name = requiredString(fn, 'name', 'tool_choice.function.name');
  if (!tools?.some((tool) => tool.name === name)) {
    throw invalidParameter(
      'tool_choice.function.name',
      `Invalid 'tool_choice.function.name': no tool named '${name}' is defined in 'tools'.`,
    );
  }
  return { type: 'tool', name };
}
