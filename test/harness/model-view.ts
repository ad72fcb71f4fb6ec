// What each major MCP client hands its model from one tool result, as observed with the real
// clients (shared clients.md): plain functions, so tests and the bench can see a result the way
// each model does. A rendering throws where its client would fail on the result. The fixed
// framing a client adds to every result (Gemini CLI's <untrusted_context> wrapper, a tool-call
// header) is left out: it is the same for any server.
import type { CallToolResult, Implementation, Tool } from '@modelcontextprotocol/sdk/types.js';

export type ClientName =
  | 'Claude Code'
  | 'Codex CLI'
  | 'Gemini CLI'
  | 'Cursor'
  | 'VS Code'
  | 'LangChain'
  | 'mcp-use';

type Content = CallToolResult['content'][number];

export interface ModelViewClient {
  name: ClientName;
  /** The `clientInfo` the client sends at initialize. */
  info: Implementation;
  /** What the model receives from `result` of the tool listed as `tool`. */
  render(result: CallToolResult, tool: Pick<Tool, 'outputSchema'>): string;
}

const texts = (result: CallToolResult) =>
  result.content.filter((c): c is Extract<Content, { type: 'text' }> => c.type === 'text').map((c) => c.text);

const links = (result: CallToolResult) =>
  result.content.filter((c): c is Extract<Content, { type: 'resource_link' }> => c.type === 'resource_link');

const hasStructured = (result: CallToolResult) => !result.isError && result.structuredContent !== undefined;

export const MODEL_VIEW_CLIENTS: readonly ModelViewClient[] = [
  {
    name: 'Claude Code',
    info: { name: 'claude-code', version: '2.1.330' },
    render(result) {
      // Only the structured content when there is one: every text block is dropped.
      if (hasStructured(result)) return JSON.stringify(result.structuredContent);
      return result.content
        .map((c) => {
          if (c.type === 'text') return c.text;
          if (c.type === 'resource_link')
            return `[Resource link: ${c.name}] ${c.uri}${c.description ? ` (${c.description})` : ''}`;
          if (c.type === 'audio' || c.type === 'image') return `[${c.mimeType} saved to /tmp/claude-media]`;
          return '';
        })
        .join('\n');
    },
  },
  {
    name: 'Codex CLI',
    info: { name: 'codex-mcp-client', version: '0.169.0' },
    render(result) {
      // The structured JSON alone; resource links and inline audio are dropped.
      if (hasStructured(result)) return JSON.stringify(result.structuredContent);
      return texts(result).join('\n');
    },
  },
  {
    name: 'Gemini CLI',
    info: { name: 'gemini-cli-mcp-client', version: '0.61.0' },
    render(result) {
      // Text blocks only (structured content ignored); links as a line; audio stripped.
      return result.content
        .map((c) =>
          c.type === 'text'
            ? c.text
            : c.type === 'resource_link'
              ? `Resource Link: ${c.name} at ${c.uri}`
              : '',
        )
        .filter(Boolean)
        .join('\n');
    },
  },
  {
    name: 'Cursor',
    info: { name: 'cursor-vscode', version: '1.0.0' },
    render(result, tool) {
      if (tool.outputSchema && !result.isError && result.structuredContent === undefined) {
        throw new Error(
          'Cursor: the tool declares an output schema but the result has no structuredContent (-32600)',
        );
      }
      return texts(result).join('\n');
    },
  },
  {
    name: 'VS Code',
    info: { name: 'Visual Studio Code', version: '1.106.0' },
    render(result) {
      // Both forms; links shown (with a preview for the user).
      const parts = [...texts(result), ...links(result).map((l) => `${l.name} (${l.uri})`)];
      if (hasStructured(result)) parts.push(JSON.stringify(result.structuredContent));
      return parts.join('\n');
    },
  },
  {
    name: 'LangChain',
    info: { name: 'langchain-mcp-adapter', version: '1.1.4' },
    render(result) {
      if (result.isError) return texts(result).join('\n');
      for (const link of links(result)) {
        if (link.uri.startsWith('file:')) {
          throw new Error(
            `LangChain: ${link.uri} becomes a file block that crashes the next ChatOpenAI / ChatAnthropic call`,
          );
        }
      }
      const blocks = result.content.map((c) =>
        c.type === 'text'
          ? { type: 'text', text: c.text }
          : c.type === 'resource_link'
            ? { type: 'file', url: c.uri }
            : c,
      );
      // Text and structured content together, as one JSON string; one text block alone as itself.
      if (hasStructured(result))
        return JSON.stringify({ content: blocks, structuredContent: result.structuredContent });
      const [only] = blocks;
      return blocks.length === 1 && only?.type === 'text'
        ? (only as { text: string }).text
        : JSON.stringify(blocks);
    },
  },
  {
    name: 'mcp-use',
    info: { name: 'mcp-use', version: '1.34.6' },
    render(result) {
      // The whole result as JSON.
      const { _meta: _dropped, ...rest } = result;
      return JSON.stringify(rest);
    },
  },
];

export function modelViewClient(name: ClientName): ModelViewClient {
  const client = MODEL_VIEW_CLIENTS.find((c) => c.name === name);
  if (!client) throw new Error(`no rendering for ${name}`);
  return client;
}

/** How often `needle` occurs in `haystack` (a page held twice shows up as 2). */
export function occurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length))
    count++;
  return count;
}
