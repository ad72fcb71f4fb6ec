/**
 * The context-cost rows of `npm run bench` alone, in seconds: the tools/list catalog, web_search's
 * text against its bare fields, and the tokens each client's model receives per result against
 * the information floor (`npx tsx bench/output.ts`, after `npm run build`).
 */
import { ratio, startReferenceProcess } from './lib.js';
import { benchModelView } from './model-view.js';
import { modelViewTable } from './model-view-table.js';
import { benchOutputSize } from './output-size.js';

const service = await startReferenceProcess();
try {
  const size = await benchOutputSize(service);
  console.log(
    `tools/list catalog: ${size.catalogBytes} bytes, ${ratio(size.catalogBytes, 13_300)} of the 13,300-byte budget`,
  );
  console.log(
    `web_search text, 10 results: ${size.searchTextChars} chars against ${size.bareChars} bare, ` +
      `${ratio(size.searchTextChars, size.bareChars)} (goal ≤ 1.05×)`,
  );
  console.log(modelViewTable(await benchModelView(service)));
} finally {
  await service.close();
}
