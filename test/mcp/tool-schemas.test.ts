import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, connectInMemory } from '../harness/harness.js';

// What the model is shown of every tool, as tools/list gives it: a change to a name, description,
// input or output schema or hint changes these files and shows in review. Update them with
// `npx vitest run test/mcp/tool-schemas.test.ts -u` when the change is meant.
describe('tools/list as the model sees it', () => {
  let structured: Connected;
  let text: Connected;
  beforeAll(async () => {
    structured = await connectInMemory({}, ['--result-format', 'structured']);
    text = await connectInMemory({}, ['--result-format', 'text']);
  });
  afterAll(async () => {
    await structured.close();
    await text.close();
  });

  it('with output schemas (clients that read structured content)', async () => {
    const { tools } = await structured.client.listTools();
    await expect(`${JSON.stringify(tools, null, 2)}\n`).toMatchFileSnapshot(
      '__snapshots__/tools-structured.json',
    );
  });

  it('without output schemas (clients that read the text)', async () => {
    const { tools } = await text.client.listTools();
    expect(tools.every((tool) => tool.outputSchema === undefined)).toBe(true);
    await expect(`${JSON.stringify(tools, null, 2)}\n`).toMatchFileSnapshot('__snapshots__/tools-text.json');
  });
});
