// What both views share: connecting to the host (host-bridge.ts), the host's theme, reading a
// result's data, playing a saved file read through the host (resources/read), and small DOM
// helpers. Runs in the host's sandboxed frame; bundled into each view by build-views.mjs.

import type { CallToolResult } from '@modelcontextprotocol/client';
import { VIEW_DATA_KEY } from '../view-data.js';
import { HostBridge, type ViewEvents } from './host-bridge.js';
import { applyHostTheme } from './host-theme.js';

export type Data = Record<string, unknown>;

/** Connects a view to its host, following the host's theme from the start and as it changes. */
export async function connectView(
  name: string,
  events: Omit<ViewEvents, 'hostContextChanged'>,
): Promise<HostBridge> {
  const host = await HostBridge.connect(
    { name, version: '1.0.0' },
    { availableDisplayModes: [...DISPLAY_MODES] },
    { ...events, hostContextChanged: applyHostTheme },
  );
  applyHostTheme(host.hostContext);
  return host;
}

/** The display modes a view can be shown in, where the host offers them. */
const DISPLAY_MODES = ['inline', 'fullscreen', 'pip'] as const;
const DISPLAY_MODE_LABELS = { inline: 'Back inline', fullscreen: 'Fullscreen', pip: 'Picture in picture' };

/**
 * Buttons for the host's other display modes (fullscreen, picture in picture), where the host
 * offers them: a sandboxed frame cannot make its own player fullscreen. Once the mode changed,
 * the buttons are those of the new mode, and the keyboard's focus stays among them.
 */
export function displayModeButtons(host: HostBridge): HTMLButtonElement[] {
  const offered = host.hostContext.availableDisplayModes ?? [];
  const current = host.hostContext.displayMode ?? 'inline';
  return DISPLAY_MODES.filter((mode) => mode !== current && offered.includes(mode)).map((mode) => {
    const button = el('button', { type: 'button', text: DISPLAY_MODE_LABELS[mode] });
    button.addEventListener('click', () => {
      void host.requestDisplayMode({ mode }).then(
        () => {
          const focused = document.activeElement === button;
          const buttons = displayModeButtons(host);
          button.parentElement?.replaceChildren(...buttons);
          if (focused) buttons[0]?.focus();
        },
        () => undefined,
      );
    });
    return button;
  });
}

/** Says `text` in `where`, styled as an error when it is one. */
export function say(where: HTMLElement, text: string, error = false): void {
  where.textContent = text;
  if (error) where.dataset.error = '';
  else delete where.dataset.error;
}

/** A result's structured content, from the result or, for a client whose model reads text alone, its `_meta`. */
export function resultData(result: CallToolResult): Data | undefined {
  const data = result.structuredContent ?? result._meta?.[VIEW_DATA_KEY];
  return data && typeof data === 'object' ? (data as Data) : undefined;
}

/** The text of a result (what a failed call says). */
export function resultText(result: CallToolResult): string {
  return result.content
    .flatMap((item) => (item.type === 'text' ? [item.text] : []))
    .join(' ')
    .trim();
}

/**
 * The public name of one of this server's tools: the name the host called the view's tool by,
 * with its base name swapped (a server may be run with a tool-name prefix).
 */
export function toolName(host: HostBridge, base: string, own: readonly string[]): string {
  const called = host.hostContext.toolInfo?.tool.name;
  const ownName = own.find((name) => called?.endsWith(name));
  return called && ownName ? `${called.slice(0, called.length - ownName.length)}${base}` : base;
}

/** The resource URI the server gives a saved file (files/saved-files.ts), from its path. */
export function savedFileUri(path: string): string {
  const name = path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
  return `gateway-tools://output/${encodeURIComponent(name)}`;
}

export function fileName(path: string): string {
  return path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
}

/** A saved file as read through the host: a URL the page can play (blob:, nothing fetched), and its bytes. */
export interface SavedMedia {
  uri: string;
  url: string;
  mimeType: string;
  /** The file's bytes, base64: what a download through the host carries. */
  base64: string;
}

export async function savedMedia(host: HostBridge, path: string, fallbackType: string): Promise<SavedMedia> {
  const uri = savedFileUri(path);
  const read = await host.readServerResource({ uri });
  const content = read.contents[0];
  if (!content || !('blob' in content)) throw new Error('the server sent no media for this file');
  const mimeType = content.mimeType ?? fallbackType;
  const bytes = Uint8Array.from(atob(content.blob), (c) => c.charCodeAt(0));
  return {
    uri,
    url: URL.createObjectURL(new Blob([bytes], { type: mimeType })),
    mimeType,
    base64: content.blob,
  };
}

/**
 * Where the file was saved, to read and to select whole (a sandboxed view cannot write to the
 * clipboard); a Download button: the host saves the file where its user chooses
 * (ui/download-file); and an Open button: the host opens the file where the server saved it
 * (ui/open-link, a file: URL), for a client on the same machine. A host may ask first, or refuse.
 */
export function fileActions(host: HostBridge, path: string, media: SavedMedia): HTMLElement {
  const where = el('code', { class: 'path', text: path, title: 'The file on the server' });
  const said = el('span', { class: 'note', role: 'status' });
  // While the host answers, the button says it is busy and ignores presses, but keeps the
  // keyboard's focus (a disabled button would lose it).
  const asked = (label: string, ask: () => Promise<{ isError?: boolean }>) => {
    const button = el('button', { type: 'button', text: label });
    button.addEventListener('click', async () => {
      if (button.hasAttribute('aria-disabled')) return;
      button.setAttribute('aria-disabled', 'true');
      say(said, '');
      try {
        if ((await ask()).isError) say(said, `${label}: refused or cancelled by this client.`, true);
      } catch (error) {
        say(said, `${label}: this client cannot do it (${message(error)}).`, true);
      } finally {
        button.removeAttribute('aria-disabled');
      }
    });
    return button;
  };
  const download = asked('Download', () =>
    host.downloadFile({
      contents: [
        { type: 'resource', resource: { uri: media.uri, mimeType: media.mimeType, blob: media.base64 } },
      ],
    }),
  );
  const open = asked('Open', () => host.openLink({ url: fileUrl(path) }));
  return el('div', { class: 'file' }, el('div', { class: 'row' }, download, open, said), where);
}

/** A local path as a file: URL (POSIX or Windows), each part escaped. */
export function fileUrl(path: string): string {
  const posix = path.replaceAll('\\', '/');
  const absolute = posix.startsWith('/') ? posix : `/${posix}`;
  const escaped = absolute.split('/').map(encodeURIComponent).join('/');
  // A Windows drive keeps its colon: file:///C:/…
  return `file://${escaped.replace(/^\/([A-Za-z])%3A(?=\/|$)/, '/$1:')}`;
}

/** An element with attributes (a `text` attribute sets its text) and children. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === 'text') node.textContent = value;
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

/** A definition list of the facts given (empty values left out). */
export function facts(rows: [string, string | undefined][]): HTMLDListElement {
  const list = el('dl', { class: 'meta' });
  for (const [term, value] of rows) {
    if (value) list.append(el('dt', { text: term }), el('dd', { text: value }));
  }
  return list;
}

export function seconds(value: number): string {
  const whole = Math.round(value);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

/** A player that says when it knows its media's length (data-duration, for people and tests). */
export function player(kind: 'video' | 'audio', src: string, onError: () => void): HTMLMediaElement {
  const media = el(kind, { controls: '', preload: 'metadata' });
  media.addEventListener('loadedmetadata', () => {
    media.dataset.duration = String(media.duration);
  });
  media.addEventListener('error', onError, { once: true });
  media.src = src;
  return media;
}

export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
