import { audioTools } from './audio/index.js';
import type { AnyToolDefinition } from './define.js';
import { askModel } from './models/ask-model.js';
import { listModels } from './models/list-models.js';
import { usage } from './usage/usage.js';
import { VIDEO_TOOLS } from './video/index.js';
import { webFetch } from './web/web-fetch.js';
import { webSearch } from './web/web-search.js';

/** Every tool the server knows, in listing order. */
export const ALL_TOOLS: readonly AnyToolDefinition[] = [
  webSearch,
  webFetch,
  ...VIDEO_TOOLS,
  ...audioTools,
  listModels,
  askModel,
  usage,
];
