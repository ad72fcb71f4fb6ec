// The groups GATEWAY_TOOLS and GATEWAY_DISABLED_TOOLS name; every tool belongs to one.
export type ToolGroup = 'search' | 'fetch' | 'video' | 'audio' | 'models' | 'chat' | 'usage';
export const TOOL_GROUPS: readonly ToolGroup[] = [
  'search',
  'fetch',
  'video',
  'audio',
  'models',
  'chat',
  'usage',
];
