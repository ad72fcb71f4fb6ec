// What a view needs from a tool result that the client's model does not get. A client whose model
// reads text alone (result-view.ts) gets results without structuredContent; its host still hands
// the view the whole result, `_meta` included, and gives the model none of `_meta`. So the
// structured content rides there, for the view only: the model's tokens do not change.

import type { CallToolResult } from '@modelcontextprotocol/server';

/** The `_meta` key a view reads a result's structured content from when it is not in the result. */
export const VIEW_DATA_KEY = 'gateway-tools/view-data';

/** `sent` with the structured content of `full` in `_meta`, when `sent` has none of its own. */
export function withViewData(full: CallToolResult, sent: CallToolResult): CallToolResult {
  if (sent.structuredContent !== undefined || full.structuredContent === undefined) return sent;
  return { ...sent, _meta: { ...sent._meta, [VIEW_DATA_KEY]: full.structuredContent } };
}
