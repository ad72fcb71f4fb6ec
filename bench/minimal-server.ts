/** Baseline for the benchmarks: the smallest useful SDK server, one echo tool over stdio. */
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

serveStdio(() => {
  const server = new McpServer({ name: 'minimal', version: '1.0.0' });
  server.registerTool(
    'echo',
    {
      description: 'Echo the text back.',
      inputSchema: z.object({ text: z.string() }),
      outputSchema: z.object({ text: z.string() }),
    },
    async ({ text }) => ({ content: [{ type: 'text', text }], structuredContent: { text } }),
  );
  return server;
});
process.stdin.on('end', () => process.exit(0));
