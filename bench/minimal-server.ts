/** Baseline for the benchmarks: the smallest useful SDK server, one echo tool over stdio. */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'minimal', version: '1.0.0' });
server.registerTool(
  'echo',
  {
    description: 'Echo the text back.',
    inputSchema: { text: z.string() },
    outputSchema: { text: z.string() },
  },
  async ({ text }) => ({ content: [{ type: 'text', text }], structuredContent: { text } }),
);
await server.connect(new StdioServerTransport());
process.stdin.on('end', () => process.exit(0));
