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

/** The bridge to the view shown now. */
let bridge;

/** The host cancels the call the view shows (its user stopped it). */
window.cancelTool = (reason) => bridge.sendToolCancelled({ reason });
/** The host is about to remove the view. */
window.tearDown = () => bridge.teardownResource({});

window.showView = async ({ viewUrl, tool, args, result }) => {
  const iframe = document.createElement('iframe');
  iframe.setAttribute('sandbox', 'allow-scripts');
  iframe.style.cssText = 'width:560px;height:520px;border:1px solid #d1d5db;border-radius:8px';
  document.body.replaceChildren(iframe);
  bridge = new AppBridge(
    null,
    { name: 'gateway-tools test host', version: '1.0.0' },
    { serverTools: {}, serverResources: {} },
    {
      hostContext: {
        theme: 'light',
        displayMode: 'inline',
        availableDisplayModes: ['inline', 'fullscreen', 'pip'],
        toolInfo: { tool },
        styles: { variables: THEME },
      },
    },
  );
  bridge.oncalltool = (params) => window.hostForward('tools/call', params);
  bridge.onreadresource = (params) => window.hostForward('resources/read', params);
  bridge.ondownloadfile = (params) => window.hostForward('ui/download-file', params);
  bridge.onopenlink = (params) => window.hostForward('ui/open-link', params);
  bridge.onrequestdisplaymode = async (params) => {
    await window.hostForward('ui/request-display-mode', params);
    return { mode: params.mode };
  };
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.src = viewUrl;
  await initialized;
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result);
};
