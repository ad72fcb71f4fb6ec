// tools/list, in the four listings a client may get: with or without output schemas (as the
// client's result view has structured content or not), and with or without the tools of the
// views (MCP Apps, for a client that declares the extension). Each is built once per connection
// from the entries converted once per process (tool-listing.ts).

import type { ListToolsResult, Tool } from '@modelcontextprotocol/server';
import type { AnyToolDefinition } from '../tools/define.js';
import { APP_TOOLS, appToolMeta, showsViews, viewOf, viewToolMeta } from '../views/ui-extension.js';
import type { ClientConnection } from './client/connection.js';
import { requestClient } from './client/request-client.js';
import { type ResultView, resultView } from './result-view.js';
import type { RequestExtra } from './server.js';
import { listedTool } from './tool-listing.js';
import { isRequired, prefixed, REQUIRED_META_KEY } from './tool-selection.js';

/** The tools of a connection under their public names, and what the requesting client sees. */
export function publicTools(connection: ClientConnection, tools: readonly AnyToolDefinition[]) {
  const { server, runtime } = connection;
  const name = (base: string) => prefixed(runtime.config, base);
  const byName = new Map(tools.map((tool) => [name(tool.name), tool]));
  // The tools only a view calls: each runs the tool its view belongs to.
  const appTools = APP_TOOLS.flatMap((app) => {
    const index = tools.findIndex((tool) => tool.name === app.runs);
    return index === -1 ? [] : [{ app, index, tool: tools[index] as AnyToolDefinition }];
  });
  const appToolNamed = new Map(appTools.map(({ app, tool }) => [name(app.name), tool]));
  const viewsShown = (extra: RequestExtra): boolean =>
    runtime.config.views === 'on' && showsViews(requestClient(server, extra).capabilities);
  return {
    tools,
    appTools,
    name,
    names: () => [...byName.keys()],
    viewsShown,
    /** The client is the one each request names (2026-07-28), or the one initialize named. */
    view: (extra: RequestExtra): ResultView =>
      resultView(runtime.config.resultFormat, requestClient(server, extra).info),
    /** The tool a public name calls, for this request's client. */
    named: (called: string, extra: RequestExtra): AnyToolDefinition | undefined =>
      byName.get(called) ?? (viewsShown(extra) ? appToolNamed.get(called) : undefined),
  };
}

export type PublicTools = ReturnType<typeof publicTools>;

/** The tools/list handler of a connection. */
export function toolList(known: PublicTools) {
  const { tools } = known;
  const listing = tools.map((tool) => listedTool(tool, known.name(tool.name), toolMeta(tool)));
  const textListing = listing.map(withoutOutputSchema);
  const withViews = (entries: Tool[]): Tool[] => [
    ...entries.map((entry, index) => {
      const linked = viewOf((tools[index] as AnyToolDefinition).name);
      return linked ? { ...entry, _meta: { ...entry._meta, ...viewToolMeta(linked) } } : entry;
    }),
    ...known.appTools.map(({ app, index }) => ({
      ...(entries[index] as Tool),
      name: known.name(app.name),
      title: app.title,
      description: app.description,
      _meta: appToolMeta(app),
    })),
  ];
  let viewListings: { structured: Tool[]; text: Tool[] } | undefined;
  return (_request: unknown, extra: RequestExtra): ListToolsResult => {
    const { structured } = known.view(extra);
    if (!known.viewsShown(extra)) return { tools: structured ? listing : textListing };
    viewListings ??= { structured: withViews(listing), text: withViews(textListing) };
    return { tools: structured ? viewListings.structured : viewListings.text };
  };
}

function withoutOutputSchema(entry: Tool): Tool {
  const { outputSchema: _dropped, ...rest } = entry;
  return rest;
}

/** Only the required tools carry a mark: the other tools' lists stay as small as they can. */
function toolMeta(tool: AnyToolDefinition): Record<string, unknown> | undefined {
  return isRequired(tool) ? { [REQUIRED_META_KEY]: true } : undefined;
}
