import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AnyToolDefinition } from './tools/types.js';

/**
 * The `tools/list` entries, built once per process instead of once per request: JSON Schemas
 * converted from the zod shapes a single time, without the `$schema` line that every schema
 * would otherwise repeat (it costs the agent's context on every session).
 */
type ToolJson = Pick<Tool, 'title' | 'description' | 'inputSchema' | 'outputSchema' | 'annotations'>;

const converted = new WeakMap<AnyToolDefinition, ToolJson>();

export function catalogEntry(
  tool: AnyToolDefinition,
  name: string,
  meta: Record<string, unknown> | undefined,
): Tool {
  let json = converted.get(tool);
  if (!json) {
    json = {
      title: tool.title,
      description: tool.description,
      inputSchema: jsonSchema(tool.inputSchema, 'input') as Tool['inputSchema'],
      outputSchema: jsonSchema(tool.outputSchema, 'output') as Tool['outputSchema'],
      annotations: tool.annotations,
    };
    converted.set(tool, json);
  }
  return meta ? { name, ...json, _meta: meta } : { name, ...json };
}

function jsonSchema(shape: z.ZodRawShape, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _drop, ...schema } = z.toJSONSchema(z.object(shape), { target: 'draft-7', io });
  return schema;
}
