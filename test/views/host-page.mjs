// The test host's page: shows one view in a sandboxed frame, as MCP Apps hosts do, connected
// through the extension's own host bridge (AppBridge). The view's tool calls and resource reads
// go to window.hostForward, which the test (view-host.ts) answers with its MCP client.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

const THEME = {
  '--color-background-primary': '#ffffff',
  '--color-background-secondary': '#f3f4f6',
  '--color-background-tertiary': '#e5e7eb',
  '--color-text-primary': '#111827',
  '--color-text-secondary': '#4b5563',
  '--color-text-info': '#2563eb',
  '--color-text-success': '#15803d',
  '--color-text-danger': '#b91c1c',
  '--color-border-primary': '#d1d5db',
  '--font-sans': 'DejaVu Sans, sans-serif',
  '--border-radius-md': '6px',
};

const DARK_THEME = {
  ...THEME,
  '--color-background-primary': '#111827',
  '--color-text-primary': '#f9fafb',
  '--color-text-secondary': '#d1d5db',
  '--color-border-primary': '#4b5563',
};

/** The bridge to the view shown now, and what the host tells it of itself (its host context). */
let bridge;
let context;
/** The sizes the view reported (ui/notifications/size-changed), in order. */
window.viewSizes = [];

/** The host cancels the call the view shows (its user stopped it). */
window.cancelTool = (reason) => bridge.sendToolCancelled({ reason });
/** The host is about to remove the view. */
window.tearDown = () => bridge.teardownResource({});
/** The host's user switches to the dark theme (ui/notifications/host-context-changed). */
window.goDark = () => changeContext({ theme: 'dark', styles: { variables: DARK_THEME } });
/** The host asks the view something (a JSON-RPC request); resolves to its answer or its error's message. */
window.askView = (method) =>
  bridge.request({ method, params: {} }).then(
    (result) => ({ result }),
    (error) => ({ error: error.message }),
  );

/** The host's context changes: the view is told what changed (ui/notifications/host-context-changed). */
function changeContext(change) {
  context = { ...context, ...change };
  bridge.setHostContext(context);
}

window.showView = async ({ viewUrl, tool, args, result }) => {
  const iframe = document.createElement('iframe');
  iframe.setAttribute('sandbox', 'allow-scripts');
  iframe.style.cssText = 'width:560px;height:520px;border:1px solid #d1d5db;border-radius:8px';
  document.body.replaceChildren(iframe);
  window.viewSizes = [];
  context = {
    theme: 'light',
    displayMode: 'inline',
    availableDisplayModes: ['inline', 'fullscreen', 'pip'],
    toolInfo: { tool },
    styles: { variables: THEME },
  };
  bridge = new AppBridge(
    null,
    { name: 'gateway-tools test host', version: '1.0.0' },
    { serverTools: {}, serverResources: {} },
    { hostContext: context },
  );
  bridge.oncalltool = (params) => window.hostForward('tools/call', params);
  bridge.onreadresource = (params) => window.hostForward('resources/read', params);
  bridge.ondownloadfile = (params) => window.hostForward('ui/download-file', params);
  bridge.onopenlink = (params) => window.hostForward('ui/open-link', params);
  // As hosts do, the frame takes the height the view reports (its width stays the host's).
  bridge.onsizechange = (size) => {
    window.viewSizes.push(size);
    if (size.height) iframe.style.height = `${size.height}px`;
  };
  bridge.onrequestdisplaymode = async (params) => {
    await window.hostForward('ui/request-display-mode', params);
    changeContext({ displayMode: params.mode });
    return { mode: params.mode };
  };
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.src = viewUrl;
  await initialized;
  await bridge.sendToolInput({ arguments: args });
  // A call still running (or cancelled before it answered) has no result yet.
  if (result !== undefined) await bridge.sendToolResult(result);
};
