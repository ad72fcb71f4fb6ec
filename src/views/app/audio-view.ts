// The audio view: a player for the speech audio_speech saved (read through the host with
// resources/read), with the text, model, voice and the file's name, its path, and a Download
// through the host. It calls no tool.

import type { CallToolResult } from '@modelcontextprotocol/client';
import {
  connectView,
  type Data,
  el,
  facts,
  fileActions,
  fileName,
  message,
  player,
  resultData,
  resultText,
  savedMedia,
  say,
} from './view-common.js';

const root = document.getElementById('view') as HTMLElement;
const title = el('h1', { text: 'Speech' });
const text = el('p', { class: 'text' });
const about = el('div');
const stage = el('div');
const files = el('div');
const note = el('div', { class: 'note' });
root.append(title, text, stage, about, files, note);

let input: Data = {};

const host = await connectView('gateway-tools audio view', {
  toolInput: ({ arguments: args }) => {
    input = args ?? {};
    text.textContent = typeof input.text === 'string' ? input.text : '';
  },
  toolResult: (result) => void show(result),
});

async function show(result: CallToolResult): Promise<void> {
  const data = resultData(result);
  if (result.isError || !data || typeof data.file_path !== 'string') {
    say(note, resultText(result) || 'No speech was made.', true);
    return;
  }
  const path = data.file_path;
  about.replaceChildren(
    facts([
      ['Model', modelWithoutVoice(String(data.model), data.voice)],
      ['Voice', typeof data.voice === 'string' ? data.voice : "the provider's default"],
      ['File', fileName(path)],
    ]),
  );
  try {
    const media = await savedMedia(host, path, String(data.mime_type));
    const audio = player('audio', media.url, () => {
      stage.replaceChildren();
      say(note, 'This browser cannot play this audio format; the file is saved.', true);
    });
    stage.replaceChildren(audio);
    files.replaceChildren(fileActions(host, path, media));
  } catch (error) {
    say(note, `Saved to ${path}; it cannot be played here: ${message(error)}`, true);
  }
}

/** The model, without the voice its id ends with (`openai/tts-1/alloy`): the voice has a line of its own. */
function modelWithoutVoice(model: string, voice: unknown): string {
  return typeof voice === 'string' && model.endsWith(`/${voice}`) ? model.slice(0, -voice.length - 1) : model;
}
