// The video view: the job (prompt, model, status); while it runs, a progress bar that follows it
// by calling video_follow through the host (video_status for the view alone, hidden from the
// model: free, this server's own tool, no key, no second billing path); when done, a player and a Save button; when failed, the reason. It calls nothing
// else: no generation can be started from here.
//
// Following outlasts a gateway that stops answering for a while: a failed check is tried again
// after a growing pause, said to the person with a countdown, for as long as RETRY_SECONDS lasts;
// then, or when the host cancels the call or tears the view down, the view stops and offers to
// check the job again. Cancelled before the call answered (the person pressed Esc while it was
// being submitted), the view has no job id: Check again looks the job up among the user's recent
// jobs (video_follow without job_id, the ledger's list), and follows it if it was started.
//
// The model shown is the one the call named, else the one the server used, from that same list:
// the server's default is known to the server, not to the view.

import type { CallToolResult } from '@modelcontextprotocol/client';
import type { HostBridge } from './host-bridge.js';
import {
  connectView,
  type Data,
  displayModeButtons,
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
  seconds,
  toolName,
} from './view-common.js';

const VIDEO_TOOLS = ['video_generate', 'video_edit', 'video_extend', 'video_status', 'video_follow'] as const;
/** How long one video_status call waits for the job: short, so the bar moves between calls. */
const POLL_WAIT_SECONDS = 3;
/** The pauses before the checks after a failed one: about two minutes in all. */
const RETRY_SECONDS = [2, 4, 8, 16, 30, 30, 30];

const root = document.getElementById('view') as HTMLElement;
const title = el('h1', { text: 'Video job' });
const about = el('div');
const status = el('div', { class: 'status', role: 'status', text: 'Waiting for the job…' });
const bar = el('div', { class: 'bar', hidden: '' }, el('div'));
const stage = el('div');
const actions = el('div', { class: 'row' });
const saved = el('div');
const note = el('div', { class: 'note' });
root.append(title, about, status, bar, stage, actions, saved, note);

let input: Data = {};
let jobId: string | undefined;
/** The model the server used, as its list of recent jobs names it (when the call named none). */
let modelUsed: string | undefined;
/** The following under way; aborted to stop it. */
let following: AbortController | undefined;
const shownAt = Date.now();

const host = await connectView('gateway-tools video view', {
  toolInput: ({ arguments: args }) => {
    input = args ?? {};
    showJob();
  },
  toolResult: (result) => void show(result),
  toolCancelled: () =>
    stopFollowing(
      jobId
        ? 'The call was cancelled, so the view stopped following the job.'
        : 'The call was cancelled before it named its job, so the view stopped waiting for it.',
    ),
  teardown: () => stopFollowing('Stopped.'),
});

function showJob(): void {
  const prompt = typeof input.prompt === 'string' ? input.prompt : undefined;
  about.replaceChildren(
    ...(prompt ? [el('p', { class: 'text', text: prompt })] : []),
    facts([
      [
        'Model',
        typeof input.model === 'string'
          ? input.model
          : (modelUsed ?? (prompt ? "the server's default" : undefined)),
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
  const first = jobId === undefined;
  jobId = String(data.job_id);
  showJob();
  if (first && typeof input.model !== 'string') void showModelUsed();
  if (data.status === 'running') {
    actions.replaceChildren();
    setStatus('running', 'Running');
    setProgress(data.progress);
    if (!following) void follow(host);
  } else if (data.status === 'failed') {
    bar.hidden = true;
    setStatus('failed', `Failed: ${String(data.error ?? 'the service gave no reason')}`);
  } else {
    bar.hidden = true;
    await done(data);
  }
}

/**
 * Calls video_status until the job is no longer running, showing each answer. A check that fails
 * (the gateway or the host not answering) is tried again after the next pause of RETRY_SECONDS.
 */
async function follow(view: HostBridge): Promise<void> {
  const control = new AbortController();
  following = control;
  let failures = 0;
  try {
    while (!control.signal.aborted) {
      const checked: { result: CallToolResult } | { failed: string } = await view
        .callServerTool({
          name: toolName(view, 'video_follow', VIDEO_TOOLS),
          arguments: { job_id: jobId, wait_seconds: POLL_WAIT_SECONDS },
        })
        .then(
          (result) => (result.isError ? { failed: resultText(result) } : { result }),
          (error: unknown) => ({ failed: message(error) }),
        );
      if (control.signal.aborted) return;
      if ('result' in checked) {
        failures = 0;
        say(note, '');
        await show(checked.result);
        if (resultData(checked.result)?.status !== 'running') return;
        continue;
      }
      const pause = RETRY_SECONDS[failures++];
      say(note, `Last answer: ${firstSentence(checked.failed)}`, true);
      if (pause === undefined) {
        offerCheckAgain('The gateway has not answered for about two minutes, so the view stopped asking.');
        return;
      }
      await countdown(pause, control.signal);
    }
  } finally {
    if (following === control) following = undefined;
  }
}

/**
 * What went wrong, for a person: the first sentence of a failure, without the call it failed in
 * ("Checking video job … failed: ") and without what it tells a model to do next.
 */
function firstSentence(failure: string): string {
  const cause = failure.replace(/^.*? failed: /, '');
  return /^.*?\.(?=\s|$)/.exec(cause)?.[0] ?? cause;
}

/** Says when the next check comes, second by second, until it is due or following stops. */
async function countdown(total: number, signal: AbortSignal): Promise<void> {
  for (let left = total; left > 0 && !signal.aborted; left--) {
    setStatus('waiting', `The gateway is not answering; trying again in ${left} s`);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 1000);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** Stops at any moment, the first result not yet come included; a job shown finished stays shown. */
function stopFollowing(why: string): void {
  following?.abort();
  following = undefined;
  const state = status.dataset.state;
  if (state === 'done' || state === 'failed' || state === 'stopped') return;
  offerCheckAgain(why);
}

/** The view no longer follows the job: it says why, and a button checks it again. */
function offerCheckAgain(why: string): void {
  bar.hidden = true;
  setStatus('stopped', why);
  const again = el('button', { type: 'button', text: 'Check again' });
  again.addEventListener('click', () => {
    actions.replaceChildren();
    say(note, '');
    setStatus('running', 'Checking the job…');
    void (jobId ? follow(host) : findJob());
  });
  actions.replaceChildren(again);
}

/** This view's call among the user's recent jobs, newest first: by job id, else by its prompt. */
async function recentJob(): Promise<Data | undefined> {
  const result = await host.callServerTool({
    name: toolName(host, 'video_follow', VIDEO_TOOLS),
    arguments: {},
  });
  const jobs = resultData(result)?.jobs;
  if (result.isError || !Array.isArray(jobs))
    throw new Error(resultText(result) || 'the jobs could not be listed');
  const prompt = typeof input.prompt === 'string' ? input.prompt.replace(/\s+/g, ' ').trim() : '';
  return (jobs as Data[]).find((job) =>
    jobId
      ? job.job_id === jobId
      : prompt.startsWith(String(job.prompt ?? '').replace(/…$/, '')) &&
        Date.parse(String(job.submitted_at)) >= shownAt - 60_000,
  );
}

/** The model the server used for this job, from its list of recent jobs, shown once known. */
async function showModelUsed(): Promise<void> {
  const job = await recentJob().catch(() => undefined);
  if (typeof job?.model !== 'string') return;
  modelUsed = job.model;
  showJob();
}

/** After a call cancelled before it answered: the job it started, if it started one, followed. */
async function findJob(): Promise<void> {
  try {
    const job = await recentJob();
    if (typeof job?.job_id === 'string') {
      jobId = job.job_id;
      if (typeof job.model === 'string') modelUsed = job.model;
      showJob();
      await follow(host);
    } else if (job) {
      offerCheckAgain('The job was sent, but whether it started is not known yet: check again in a moment.');
    } else {
      offerCheckAgain('No job from this call is among your recent jobs: it was not started.');
    }
  } catch (error) {
    offerCheckAgain(`The recent jobs could not be listed: ${firstSentence(message(error))}`);
  }
}

/**
 * A finished job plays at once: its file, saved by the server if it was not yet (video_follow with
 * download), read through the host. Nothing is fetched from the provider's origin, so it plays
 * wherever the provider serves it; Save stays for when saving failed.
 */
async function done(data: Data): Promise<void> {
  const length = typeof data.duration === 'number' ? ` · ${seconds(data.duration)}` : '';
  setStatus('done', `Done${length}`);
  const path = typeof data.file_path === 'string' ? data.file_path : undefined;
  await (path ? playSaved(path) : saveAndPlay());
}

/**
 * Saves the finished video through the server and plays it. Pressed again (Save, after a failed
 * save), the button stays where it is, busy while it saves, so the keyboard's focus stays on it;
 * once the video plays, the focus moves to the player.
 */
async function saveAndPlay(button?: HTMLButtonElement): Promise<void> {
  if (button?.getAttribute('aria-disabled') === 'true') return;
  button?.setAttribute('aria-disabled', 'true');
  say(note, 'Saving the video to play it here…');
  try {
    const result = await host.callServerTool({
      name: toolName(host, 'video_follow', VIDEO_TOOLS),
      arguments: { job_id: jobId, wait_seconds: 0, download: true },
    });
    const path = resultData(result)?.file_path;
    if (result.isError || typeof path !== 'string')
      throw new Error(resultText(result) || 'nothing was saved');
    const focused = button !== undefined && document.activeElement === button;
    actions.replaceChildren();
    await playSaved(path);
    if (focused) stage.querySelector('video')?.focus();
  } catch (error) {
    say(note, `Saving failed: ${message(error)}`, true);
    if (button) {
      button.removeAttribute('aria-disabled');
      return;
    }
    const save = el('button', { type: 'button', text: 'Save' });
    save.addEventListener('click', () => void saveAndPlay(save));
    actions.replaceChildren(save);
  }
}

async function playSaved(path: string): Promise<void> {
  saved.textContent = '';
  say(note, '');
  try {
    const media = await savedMedia(host, path, 'video/mp4');
    const video = player('video', media.url, () => {
      stage.replaceChildren();
      say(note, `${fileName(path)} is saved, but this browser cannot play it.`, true);
    });
    // The file's own length, once known, over what the service said it would be.
    video.addEventListener('loadedmetadata', () => {
      if (Number.isFinite(video.duration)) setStatus('done', `Done · ${seconds(video.duration)}`);
    });
    stage.replaceChildren(video);
    actions.replaceChildren(...displayModeButtons(host));
    saved.replaceChildren(fileActions(host, path, media));
  } catch (error) {
    say(saved, `Saved to ${path}; it cannot be shown here: ${message(error)}`, true);
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
    status.textContent = `Running · ${Math.round(progress)}% · ${seconds((Date.now() - shownAt) / 1000)} so far`;
  } else {
    bar.dataset.indeterminate = '';
    status.textContent = `Running · ${seconds((Date.now() - shownAt) / 1000)} so far`;
  }
}
