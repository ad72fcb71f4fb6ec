// Prints every tool's compacted JSON Schemas; scripts/build.mjs embeds them in the bundle.
import { convertSchemas } from '../src/mcp/tool-listing.js';
import { ALL_TOOLS } from '../src/tools/index.js';

process.stdout.write(JSON.stringify(convertSchemas(ALL_TOOLS)));
