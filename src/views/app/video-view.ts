// The video view: the job (prompt, model, status); while it runs, a progress bar that follows it
// by calling video_status through the host (free, and this server's own tool: no key, no second
// billing path); when done, a player and a Save button; when failed, the reason. It calls nothing
// else: no generation can be started from here.

import type { CallToolResult } from '@modelcontextprotocol/client';
import type { App } from '@modelcontextprotocol/ext-apps';
import {
  connectView,
  type Data,
  el,
  facts,
  fileName,
  message,
  player,
  resultData,
  resultText,
  savedFileUrl,
  seconds,
  toolName,
} from './view-common.js';

const VIDEO_TOOLS = ['video_generate', 'video_edit', 'video_extend', 'video_status'] as const;
/** How long one video_status call waits for the job: short, so the bar moves between calls. */
const POLL_WAIT_SECONDS = 3;

const root = document.getElementById('view') as HTMLElement;
const title = el('h1', { text: 'Video job' });
const about = el('div');
const status = el('div', { class: 'status', role: 'status', text: 'Waiting for the job…' });
const bar = el('div', { class: 'bar', hidden: '' }, el('div'));
const stage = el('div');
const actions = el('div', { class: 'row' });
const saved = el('div', { class: 'note saved' });
const note = el('div', { class: 'note' });
root.append(title, about, status, bar, stage, actions, saved, note);

let input: Data = {};
let jobId: string | undefined;
let following = false;

const app = await connectView('gateway-tools video view', (view) => {
  view.ontoolinput = ({ arguments: args }) => {
    input = args ?? {};
    showJob();
  };
  view.ontoolresult = (result) => void show(result as CallToolResult);
});

function showJob(): void {
  const prompt = typeof input.prompt === 'string' ? input.prompt : undefined;
  about.replaceChildren(
    ...(prompt ? [el('p', { class: 'text', text: prompt })] : []),
    facts([
      [
        'Model',
        typeof input.model === 'string' ? input.model : prompt ? 'the default video model' : undefined,
      ],
      ['Job', jobId],
    ]),
  );
}

async function show(result: CallToolResult): Promise<void> {
  const data = resultData(result);
  if (result.isError || !data) {
    setStatus('failed', resultText(result) || 'The call failed.');
    return;
  }
  jobId = String(data.job_id);
  showJob();
  if (data.status === 'running') {
    setStatus('running', 'Running');
    setProgress(data.progress);
    if (!following) void follow(app);
  } else if (data.status === 'failed') {
    bar.hidden = true;
    setStatus('failed', `Failed: ${String(data.error ?? 'the service gave no reason')}`);
  } else {
    bar.hidden = true;
    await done(data);
  }
}

/** Calls video_status until the job is no longer running, showing each answer. */
async function follow(view: App): Promise<void> {
  following = true;
  try {
    for (;;) {
      const result = await view.callServerTool({
        name: toolName(view, 'video_status', VIDEO_TOOLS),
        arguments: { job_id: jobId, wait_seconds: POLL_WAIT_SECONDS },
      });
      await show(result);
      if (result.isError || resultData(result)?.status !== 'running') return;
    }
  } catch (error) {
    setStatus('failed', `Could not follow the job: ${message(error)}`);
  } finally {
    following = false;
  }
}

async function done(data: Data): Promise<void> {
  const length = typeof data.duration === 'number' ? ` · ${seconds(data.duration)}` : '';
  setStatus('done', `Done${length}`);
  const path = typeof data.file_path === 'string' ? data.file_path : undefined;
  if (path) {
    await playSaved(path);
    return;
  }
  const url = typeof data.video_url === 'string' ? data.video_url : undefined;
  const save = el('button', { type: 'button', text: 'Save' });
  save.addEventListener('click', () => void saveVideo(save));
  actions.replaceChildren(save);
  if (url) {
    // The gateway's own URL plays where the host's content policy allows it; else Save plays it.
    stage.replaceChildren(
      player('video', url, () => {
        stage.replaceChildren();
        note.textContent = 'This host does not play the video from its URL: Save it to play it here.';
      }),
    );
  }
}

async function saveVideo(button: HTMLButtonElement): Promise<void> {
  button.disabled = true;
  button.textContent = 'Saving…';
  try {
    const result = await app.callServerTool({
      name: toolName(app, 'video_status', VIDEO_TOOLS),
      arguments: { job_id: jobId, wait_seconds: 0, download: true },
    });
    const path = resultData(result)?.file_path;
    if (result.isError || typeof path !== 'string')
      throw new Error(resultText(result) || 'nothing was saved');
    actions.replaceChildren();
    await playSaved(path);
  } catch (error) {
    button.disabled = false;
    button.textContent = 'Save';
    note.textContent = `Saving failed: ${message(error)}`;
  }
}

async function playSaved(path: string): Promise<void> {
  saved.textContent = `Saved as ${fileName(path)}`;
  saved.title = path;
  note.textContent = '';
  try {
    const src = await savedFileUrl(app, path, 'video/mp4');
    const video = player('video', src, () => {
      note.textContent = `${fileName(path)} is saved, but this browser cannot play it.`;
    });
    // The file's own length, once known, over what the service said it would be.
    video.addEventListener('loadedmetadata', () => {
      if (Number.isFinite(video.duration)) setStatus('done', `Done · ${seconds(video.duration)}`);
    });
    stage.replaceChildren(video);
  } catch (error) {
    note.textContent = `Saved to ${path}; it cannot be shown here: ${message(error)}`;
  }
}

function setStatus(state: string, text: string): void {
  status.dataset.state = state;
  status.textContent = text;
}

function setProgress(progress: unknown): void {
  bar.hidden = false;
  const fill = bar.firstElementChild as HTMLElement;
  if (typeof progress === 'number') {
    bar.removeAttribute('data-indeterminate');
    fill.style.width = `${progress}%`;
    bar.dataset.progress = String(progress);
    status.textContent = `Running · ${Math.round(progress)}%`;
  } else {
    bar.dataset.indeterminate = '';
  }
}
