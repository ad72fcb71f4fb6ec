// OpenAI-shaped upstreams: api.openai.com, groq's /openai/v1, xAI's chat (the gateway lists grok
// models first), the OpenAI-compatible provider nodes and the self-hosted speech and
// transcription servers on the loopback port. Chat and Responses echo the last input
// ("Echo: ..."; nothing at all for `empty-answer`), as JSON or as SSE when the body asks to
// stream; speech answers audio bytes in the format asked for (`answers-<format>` in the text
// overrides it); transcription answers in the format asked for, reading the words after
// `SPOKEN:` in the uploaded file (tests write their fake audio that way).
import type { ServerResponse } from 'node:http';
import { answerFault, json } from './answer.js';
import { type FilePart, readMultipart } from './multipart.js';
import type { Route, UpstreamRequest } from './types.js';

const HOSTS = new Set(['api.openai.com', 'api.groq.com', 'local']);
/** xAI serves chat and Responses the OpenAI way, but no speech or transcription. */
const CHAT_HOSTS = new Set([...HOSTS, 'api.x.ai']);

function textOfContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (typeof p === 'string' ? p : String((p as { text?: unknown }).text ?? '')))
      .join('');
  }
  return '';
}

function lastUserText(req: UpstreamRequest): string {
  const messages = req.json?.messages;
  if (Array.isArray(messages))
    return textOfContent(messages.filter((m) => m?.role === 'user').at(-1)?.content);
  const input = req.json?.input;
  if (typeof input === 'string') return input;
  if (Array.isArray(input))
    return textOfContent(input.filter((m) => m?.role === 'user' || !m?.role).at(-1)?.content);
  return '';
}

/** The echo of the last input; `empty-answer` in it makes the model answer nothing at all. */
function answerTo(req: UpstreamRequest): string {
  const input = lastUserText(req);
  return /\bempty-answer\b/.test(input) ? '' : `Echo: ${input}`;
}

function sse(res: ServerResponse, events: unknown[], done: boolean): true {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) {
    const type = (event as { type?: string }).type;
    res.write(`${type ? `event: ${type}\n` : ''}data: ${JSON.stringify(event)}\n\n`);
  }
  if (done) res.write('data: [DONE]\n\n');
  res.end();
  return true;
}

function pieces(text: string): string[] {
  const third = Math.ceil(text.length / 3);
  return [text.slice(0, third), text.slice(third, 2 * third), text.slice(2 * third)].filter(Boolean);
}

const chat: Route = (req, res) => {
  if (!CHAT_HOSTS.has(req.host) || !req.path.endsWith('/chat/completions')) return false;
  if (answerFault(req, res)) return true;
  const model = String(req.json?.model ?? 'fake');
  const text = answerTo(req);
  const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
  if (req.json?.stream !== true) {
    return json(res, 200, {
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
      usage,
    });
  }
  const chunk = (delta: object, finish: string | null, extra = {}) => ({
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  });
  return sse(
    res,
    [
      chunk({ role: 'assistant', content: '' }, null),
      ...pieces(text).map((p) => chunk({ content: p }, null)),
      chunk({}, 'stop', { usage }),
    ],
    true,
  );
};

const responses: Route = (req, res) => {
  if (!CHAT_HOSTS.has(req.host) || !req.path.endsWith('/responses')) return false;
  if (answerFault(req, res)) return true;
  const model = String(req.json?.model ?? 'fake');
  const text = answerTo(req);
  const message = {
    type: 'message',
    id: 'msg_fake',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text, annotations: [] }],
  };
  const response = (status: string, output: unknown[]) => ({
    id: 'resp_fake',
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    model,
    status,
    output,
    usage: status === 'completed' ? { input_tokens: 12, output_tokens: 8, total_tokens: 20 } : null,
  });
  if (req.json?.stream !== true) return json(res, 200, response('completed', [message]));
  // OpenAI numbers its Responses events.
  const numbered = (events: Record<string, unknown>[]) =>
    events.map((event, sequence_number) => ({ ...event, sequence_number }));
  return sse(
    res,
    numbered([
      { type: 'response.created', response: response('in_progress', []) },
      ...pieces(text).map((delta) => ({
        type: 'response.output_text.delta',
        item_id: 'msg_fake',
        output_index: 0,
        content_index: 0,
        delta,
      })),
      { type: 'response.output_text.done', item_id: 'msg_fake', output_index: 0, content_index: 0, text },
      { type: 'response.completed', response: response('completed', [message]) },
    ]),
    false,
  );
};

const MAGIC: Record<string, Buffer> = {
  mp3: Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'),
  wav: Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'),
  opus: Buffer.from('OggS\x00\x02', 'latin1'),
  flac: Buffer.from('fLaC\x00\x00\x00\x22', 'latin1'),
  aac: Buffer.from([0xff, 0xf1, 0x50, 0x80]),
  pcm: Buffer.alloc(0),
};

const OPENAI_VOICES = new Set([
  'alloy',
  'ash',
  'ballad',
  'coral',
  'echo',
  'fable',
  'nova',
  'onyx',
  'sage',
  'shimmer',
  'verse',
]);

/**
 * The audio the fake speech provider answers: the format's magic bytes, then what it was asked
 * (`SPEECH model=<m> voice=<v> text=<t>`), so a test can tell the saved file is that answer.
 */
export function speechAudio(format: string, asked: Record<string, unknown>): Buffer {
  const spoken = `SPEECH model=${asked.model} voice=${asked.voice} text=${asked.input}`;
  return Buffer.concat([MAGIC[format] ?? MAGIC.mp3!, Buffer.from(spoken)]);
}

const speech: Route = (req, res) => {
  if (!HOSTS.has(req.host) || !req.path.endsWith('/audio/speech')) return false;
  if (answerFault(req, res)) return true;
  // OpenAI refuses a voice it does not have (what a two-part id such as openai/tts-1 becomes).
  const voice = String(req.json?.voice ?? '');
  if (req.host === 'api.openai.com' && !OPENAI_VOICES.has(voice)) {
    return json(res, 400, {
      error: {
        message: `Invalid value for 'voice': '${voice}'.`,
        type: 'invalid_request_error',
        param: 'voice',
      },
    });
  }
  // `answers-<format>` in the text: a provider that sends that format whatever was asked.
  const forced = /\banswers-(mp3|wav|opus|flac|aac)\b/.exec(String(req.json?.input ?? ''))?.[1];
  const format = forced ?? String(req.json?.response_format ?? 'mp3');
  const body = speechAudio(format, req.json ?? {});
  res.writeHead(200, {
    'content-type': format === 'mp3' ? 'audio/mpeg' : `audio/${format}`,
    'content-length': body.length,
  });
  res.end(body);
  return true;
};

function cue(seconds: number, sep: string): string {
  const ms = Math.round(seconds * 1000);
  const hh = String(Math.floor(ms / 3_600_000)).padStart(2, '0');
  const mm = String(Math.floor(ms / 60_000) % 60).padStart(2, '0');
  const ss = String(Math.floor(ms / 1000) % 60).padStart(2, '0');
  return `${hh}:${mm}:${ss}${sep}${String(ms % 1000).padStart(3, '0')}`;
}

const transcription: Route = (req, res) => {
  if (!HOSTS.has(req.host) || !req.path.endsWith('/audio/transcriptions')) return false;
  if (answerFault(req, res)) return true;
  const fields = readMultipart(req.raw, req.headers['content-type']);
  const file = fields?.file as FilePart | undefined;
  if (!file) return json(res, 400, { error: { message: 'file is required', type: 'invalid_request_error' } });
  const text = /SPOKEN:([^\n\0]*)/.exec(file.text)?.[1]?.trim() ?? `Transcribed ${file.bytes} bytes.`;
  const format = String(fields?.response_format ?? 'json');
  const plain = (body: string, type: string) => {
    res.writeHead(200, { 'content-type': type });
    res.end(body);
    return true;
  };
  if (format === 'text') return plain(`${text}\n`, 'text/plain; charset=utf-8');
  if (format === 'srt')
    return plain(`1\n${cue(0, ',')} --> ${cue(2.5, ',')}\n${text}\n\n`, 'text/plain; charset=utf-8');
  if (format === 'vtt')
    return plain(`WEBVTT\n\n${cue(0, '.')} --> ${cue(2.5, '.')}\n${text}\n\n`, 'text/vtt; charset=utf-8');
  if (format === 'verbose_json') {
    return json(res, 200, {
      task: 'transcribe',
      language: 'english',
      duration: 2.5,
      text,
      segments: [{ id: 0, start: 0, end: 2.5, text }],
    });
  }
  return json(res, 200, { text });
};

export const openAiRoutes: Route[] = [chat, responses, speech, transcription];
