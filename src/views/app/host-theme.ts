// The host's look in a view, as the extension's style helpers apply it: its light or dark theme on
// the document, its CSS variables (colours, fonts, radii; view.css uses them, with fallbacks), and
// its font faces, added once.

import type { McpUiHostContext, McpUiStyles, McpUiTheme } from '@modelcontextprotocol/ext-apps';

const FONTS_ID = '__mcp-host-fonts';

/** Applies what the host's context says about its look; what it leaves out stays as it was. */
export function applyHostTheme(context: McpUiHostContext): void {
  if (context.theme) applyDocumentTheme(context.theme);
  if (context.styles?.variables) applyStyleVariables(context.styles.variables);
  if (context.styles?.css?.fonts) applyFonts(context.styles.css.fonts);
}

function applyDocumentTheme(theme: McpUiTheme): void {
  const root = document.documentElement;
  root.setAttribute('data-theme', theme);
  root.style.colorScheme = theme;
}

function applyStyleVariables(variables: McpUiStyles): void {
  for (const [name, value] of Object.entries(variables)) {
    if (value !== undefined) document.documentElement.style.setProperty(name, value);
  }
}

/** The host's @font-face rules (or @import), in a style element of their own, once. */
function applyFonts(css: string): void {
  if (document.getElementById(FONTS_ID)) return;
  const style = document.createElement('style');
  style.id = FONTS_ID;
  style.textContent = css;
  document.head.appendChild(style);
}
