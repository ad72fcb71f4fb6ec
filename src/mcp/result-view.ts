import type { Implementation } from '@modelcontextprotocol/server';

/**
 * What a session's tool results carry, decided once per client. Clients hand their model
 * different parts of a result (docs: README "What the model sees"): Claude Code and Codex only
 * the JSON of `structuredContent` when there is one, Gemini CLI only the text, VS Code, LangChain
 * and mcp-use both (a page twice). Every result's text carries every fact and next step; so does
 * its structured content. A client whose model reads text gets the text alone (and a tools/list
 * without output schemas, which some clients would otherwise hold the result to); a client we do
 * not know gets both forms, as the MCP spec describes them.
 */
export interface ResultView {
  /** structuredContent in results and outputSchema in tools/list. */
  structured: boolean;
  /** resource_link items: only for clients that show or read them without harm. */
  links: boolean;
}

export type ResultFormat = 'auto' | 'text' | 'structured';

export interface KnownClient {
  /** The client, as people call it. */
  client: string;
  /** Matches the client's `clientInfo.name`, lower-cased, with spaces as dashes. */
  name: RegExp;
  view: ResultView;
}

const TEXT_ONLY: ResultView = { structured: false, links: false };

export const KNOWN_CLIENTS: readonly KnownClient[] = [
  // The model gets only JSON.stringify(structuredContent) when it is there: text is smaller.
  // Links would be shown as a line repeating the path the text already gives.
  { client: 'Claude Code', name: /^claude-code/, view: TEXT_ONLY },
  // The same; links and inline audio are dropped anyway.
  { client: 'Codex CLI', name: /^codex/, view: TEXT_ONLY },
  // Text only; links shown as a line repeating the path.
  { client: 'Gemini CLI', name: /^gemini-cli/, view: TEXT_ONLY },
  // Holds a result to its output schema (-32600 without structuredContent); its model reads text.
  { client: 'Cursor', name: /^cursor/, view: TEXT_ONLY },
  // Passes both forms to the model. It shows links with a preview, but the text names the file
  // already, and a link costs the model as many tokens again.
  { client: 'VS Code', name: /^(visual-studio-code|vscode)/, view: TEXT_ONLY },
  // Both forms as one JSON string; a file:// link becomes a file block that crashes the next
  // ChatOpenAI / ChatAnthropic call.
  { client: 'LangChain MCP adapters', name: /^langchain/, view: TEXT_ONLY },
  // The whole result as JSON.
  { client: 'mcp-use', name: /^mcp-use/, view: TEXT_ONLY },
  // Text blocks only; links would arrive as JSON text.
  { client: 'Mastra', name: /^mastra/, view: TEXT_ONLY },
  // Text, or the structured content when the application declared a typed schema for the tool.
  { client: 'AI SDK', name: /^ai-sdk/, view: { structured: true, links: false } },
];

const BOTH: ResultView = { structured: true, links: true };

/** The view for a session: the setting, else what its client is known to need. */
export function resultView(format: ResultFormat, client: Implementation | undefined): ResultView {
  if (format === 'text') return TEXT_ONLY;
  if (format === 'structured') return BOTH;
  return knownClient(client)?.view ?? BOTH;
}

export function knownClient(client: Pick<Implementation, 'name'> | undefined): KnownClient | undefined {
  if (!client?.name) return undefined;
  const name = client.name.trim().toLowerCase().replace(/\s+/g, '-');
  return KNOWN_CLIENTS.find((known) => known.name.test(name));
}
