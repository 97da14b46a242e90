/**
 * `tools` and `tool_choice` of a Messages body -> canonical tool definitions and choice (with
 * `disable_parallel_tool_use` -> `parallelToolCalls`). Only custom (client) tools.
 */
import type { ToolChoice, ToolDefinition } from '../../core/generation.ts';
import { invalidParameter } from '../../core/service-error.ts';
import {
  isObject,
  type JsonObject,
  MESSAGES_WORDING as W,
  optionalString,
  present,
  requiredObject,
  requiredString,
  wrongType,
} from '../shared/request-fields.ts';

/** Anthropic tool-name rule. */
const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,128}$/;

/**
 * SPEC: each tool has name, description and input_schema, all required (`compatible`: description
 * optional, as in the Anthropic API). Only custom (client) tools are supported.
 */
export function decodeTools(value: unknown, compatible: boolean): ToolDefinition[] {
  if (!Array.isArray(value)) throw wrongType('tools', 'an array', value, W);
  const names = new Set<string>();
  return value.map((raw, index) => {
    const path = `tools[${index}]`;
    if (!isObject(raw)) throw wrongType(path, 'an object', raw, W);
    const type = present(raw['type']);
    if (type !== undefined && type !== 'custom') {
      throw invalidParameter(
        `${path}.type`,
        `Only custom tools (name, description, input_schema) are supported, got type '${String(type)}'.`,
      );
    }
    const name = requiredString(raw, 'name', `${path}.name`, W);
    if (!TOOL_NAME_PATTERN.test(name)) {
      throw invalidParameter(`${path}.name`, `'${path}.name' must be 1-128 characters of letters, digits, '_' or '-', got '${name}'.`);
    }
    if (names.has(name)) throw invalidParameter(`${path}.name`, `Tool name '${name}' is declared more than once.`);
    names.add(name);
    const description = compatible
      ? optionalString(raw, 'description', `${path}.description`, W)
      : requiredString(raw, 'description', `${path}.description`, W);
    const inputSchema = requiredObject(raw, 'input_schema', `${path}.input_schema`, W);
    if (inputSchema['type'] !== 'object') {
      throw invalidParameter(`${path}.input_schema.type`, `'${path}.input_schema' must be a JSON Schema with type 'object'.`);
    }
    return description === undefined ? { name, inputSchema } : { name, description, inputSchema };
  });
}

/** SPEC: `auto` (default), `any`, or `{type:'tool', name}`; Anthropic's `none` and `disable_parallel_tool_use` too. */
export function decodeToolChoice(value: unknown, tools: ToolDefinition[]): { choice: ToolChoice; parallelToolCalls?: boolean } {
  let type: string;
  let object: JsonObject | undefined;
  if (typeof value === 'string') {
    type = value;
  } else if (isObject(value)) {
    object = value;
    type = requiredString(value, 'type', 'tool_choice.type', W);
  } else {
    throw wrongType('tool_choice', 'a string or an object', value, W);
  }
  const typePath = object ? 'tool_choice.type' : 'tool_choice';
  let choice: ToolChoice;
  switch (type) {
    case 'auto':
      choice = { type: 'auto' };
      break;
    case 'none':
      choice = { type: 'none' };
      break;
    case 'any':
      if (tools.length === 0) throw invalidParameter(typePath, "tool_choice 'any' needs at least one tool in 'tools'.");
      choice = { type: 'required' };
      break;
    case 'tool': {
      if (!object)
        throw invalidParameter('tool_choice', 'tool_choice \'tool\' must be an object with a \'name\': {"type":"tool","name":"..."}.');
      const name = requiredString(object, 'name', 'tool_choice.name', W);
      if (!tools.some((tool) => tool.name === name)) {
        throw invalidParameter('tool_choice.name', `'tool_choice.name' is '${name}', which is not a tool declared in 'tools'.`);
      }
      choice = { type: 'tool', name };
      break;
    }
    default:
      throw invalidParameter(typePath, `'${typePath}' must be 'auto', 'any', 'tool' or 'none', got '${type}'.`);
  }
  const result: { choice: ToolChoice; parallelToolCalls?: boolean } = { choice };
  const disableParallel = object ? present(object['disable_parallel_tool_use']) : undefined;
  if (disableParallel !== undefined) {
    if (typeof disableParallel !== 'boolean') {
      throw wrongType('tool_choice.disable_parallel_tool_use', 'a boolean', disableParallel, W);
    }
    result.parallelToolCalls = !disableParallel;
  }
  return result;
}
