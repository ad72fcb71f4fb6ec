import { askModel } from './ask-model.js';
import { audioTools } from './audio.js';
import { listModels } from './models.js';
import type { AnyToolDefinition } from './types.js';
import { VIDEO_TOOLS } from './video.js';
import { webFetch } from './web-fetch.js';
import { webSearch } from './web-search.js';

/** Every tool the server knows, in listing order. */
export const ALL_TOOLS: readonly AnyToolDefinition[] = [
  webSearch,
  webFetch,
  ...VIDEO_TOOLS,
  ...audioTools,
  listModels,
  askModel,
];
