import { lstatSync, readdirSync, type Stats } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { savedFileName } from '../../../src/files/saved-files.js';
import { sharedTranscriptsOf, transcriptsOf } from '../../../src/tools/audio/transcript-cache.js';
import { decodeJobHandle } from '../../../src/tools/video/job-handle.js';
import { pagesOf, sharedPagesOf } from '../../../src/tools/web/page-cache.js';
import { scaled } from '../../harness/time.js';
import { snapshotDiff, snapshotTree } from './fs-snapshot.js';
import { overTheWire } from './hostile.js';
import { countCall, countFailure, type FuzzStats } from './stats.js';
import type { FuzzCall } from './tool-args.js';
import type { World } from './world.js';

/** One call must answer well within this, or it counts as a hang. */
const CALL_TIMEOUT_MS = 20_000;
/** What every saved file is called: <stem>-<yyyymmdd>-<hhmmss>[-n].<ext>. */
const SAVED_NAME = /^[a-z0-9-]{1,48}-\d{8}-\d{6}(-\d{1,3})?\.[a-z0-9]{1,8}$/;
/** Signs of a bug rather than a refusal (user input is echoed in messages, so nothing looser). */
const BUG_MARKERS = ['This is a bug', 'Output validation error', '[object Object]'];
const STACK_LINE = /\n\s+at .+:\d+:\d+/;

/**
 * Makes one call through the MCP client and checks every invariant: a well-formed result (or a
 * protocol error only for arguments that are not an object), no bug report, nothing logged at
 * error level, no sentinel content anywhere, and no file touched outside the output directory.
 */
export async function callAndCheck(w: World, call: FuzzCall, stats: FuzzStats): Promise<void> {
  w.service.resetCounters();
  // Fresh caches: each call stands alone, so a failure reproduces (and shrinks) by itself.
  pagesOf(w.conn.runtime).clear();
  transcriptsOf(w.conn.runtime).clear();
  await sharedPagesOf(w.conn.runtime).clear();
  await sharedTranscriptsOf(w.conn.runtime).clear();
  const errorsBefore = w.loggedErrors.length;
  const args = call.arguments === undefined ? undefined : overTheWire(call.arguments);
  const started = Date.now();
  let result: CallToolResult;
  try {
    result = (await w.conn.client.callTool(
      { name: call.name, arguments: args as Record<string, unknown> },
      undefined,
      {
        timeout: scaled(CALL_TIMEOUT_MS),
      },
    )) as CallToolResult;
  } catch (error) {
    countCall(stats, call.name, Date.now() - started);
    // Only arguments that are not an object may be refused at the protocol level, with -32602.
    const isObject = typeof args === 'object' && args !== null && !Array.isArray(args);
    if (isObject || !(error instanceof McpError) || error.code !== ErrorCode.InvalidParams) throw error;
    stats.protocolErrors++;
    return checkSurroundings(w, stats, errorsBefore);
  }
  countCall(stats, call.name, Date.now() - started);
  checkShape(result, stats, call.name);
  checkNoSentinel(w, JSON.stringify(result), 'the result');
  for (const request of w.service.requests) {
    checkNoSentinel(w, JSON.stringify(request), `a ${request.route} request`);
  }
  checkSavedPaths(w, result);
  if (call.name === 'video_status') checkPollTarget(w, args, result);
  checkSurroundings(w, stats, errorsBefore);
}

function checkShape(result: CallToolResult, stats: FuzzStats, tool: string): void {
  if (!Array.isArray(result.content)) throw new Error(`content is not an array: ${JSON.stringify(result)}`);
  if (!result.isError) {
    stats.succeeded++;
    if (typeof result.structuredContent !== 'object' || result.structuredContent === null) {
      throw new Error('a successful result has no structuredContent');
    }
    if (result.content[0]?.type !== 'text') throw new Error('a successful result does not start with text');
    return;
  }
  const [item] = result.content;
  if (result.content.length !== 1 || item?.type !== 'text') {
    throw new Error(`an error result must be one text item: ${JSON.stringify(result.content).slice(0, 300)}`);
  }
  const message = item.text;
  if (message.trim() === '') throw new Error('an error result has an empty message');
  const marker = BUG_MARKERS.find((m) => message.includes(m));
  if (marker || STACK_LINE.test(message)) {
    throw new Error(`error result reads like a bug ("${marker ?? 'stack'}"): ${message}`);
  }
  countFailure(stats, tool, message);
}

function checkNoSentinel(w: World, text: string, where: string): void {
  if (text.includes(w.token)) throw new Error(`sentinel content reached ${where}`);
  for (const s of w.sentinels) {
    if (text.includes(s.sha256)) throw new Error(`${s.path} was uploaded (its sha256 is in ${where})`);
    if (text.includes(s.base64.slice(0, 40))) throw new Error(`${s.path} reached ${where} as base64`);
  }
}

/** Every file a result names lies inside the output directory, and exists. */
function checkSavedPaths(w: World, result: CallToolResult): void {
  const paths: string[] = [];
  const filePath = (result.structuredContent as { file_path?: unknown } | undefined)?.file_path;
  if (typeof filePath === 'string') paths.push(filePath);
  for (const item of result.content) {
    if (item.type !== 'resource_link') continue;
    if (item.uri.startsWith('file:')) paths.push(fileURLToPath(item.uri));
    const saved = savedFileName(item.uri);
    if (saved !== null) paths.push(join(w.outDir, saved));
  }
  for (const path of paths) {
    const rel = relative(w.outDir, path);
    if (rel.startsWith('..') || isAbsolute(rel) || rel.includes('/')) {
      throw new Error(`a result names ${path}, outside the output directory`);
    }
    if (!lstatSync(path).isFile()) throw new Error(`a result names ${path}, which is not a file`);
  }
}

/** A handle that decodes must lead to a status read of exactly that job, nowhere else. */
function checkPollTarget(w: World, args: unknown, result: CallToolResult): void {
  const jobId = (args as { job_id?: unknown } | undefined)?.job_id;
  if (typeof jobId !== 'string' || textOf(result).startsWith('Invalid arguments for')) return;
  let requestId: string;
  try {
    requestId = decodeJobHandle(jobId).requestId;
  } catch {
    if (w.service.requests.length > 0) throw new Error(`an invalid job_id reached the service: ${jobId}`);
    return;
  }
  const polls = w.service.requests.filter((r) => r.route === 'videos.poll');
  const expected = `/v1/videos/${encodeURIComponent(requestId)}`;
  if (polls.length === 0 || polls.some((r) => r.path !== expected)) {
    throw new Error(
      `video_status for request id ${JSON.stringify(requestId)} polled ${JSON.stringify(polls.map((p) => p.path))} instead of ${expected}`,
    );
  }
}

function checkSurroundings(w: World, stats: FuzzStats, errorsBefore: number): void {
  const logged = w.loggedErrors.slice(errorsBefore);
  if (logged.length > 0) throw new Error(`the server logged errors: ${logged.join(' | ')}`);
  const changed = snapshotDiff(w.baseline, snapshotTree(w.base, [w.outDir, w.tmp]));
  if (changed.length > 0)
    throw new Error(`files outside the output directory changed: ${changed.join(', ')}`);
  const leftovers = readdirSync(w.tmp);
  if (leftovers.length > 0) throw new Error(`temporary files were left behind: ${leftovers.join(', ')}`);
  for (const name of readdirSync(w.outDir)) {
    if (stats.saved.has(name)) continue;
    if (!SAVED_NAME.test(name))
      throw new Error(`a saved file has an unexpected name: ${JSON.stringify(name)}`);
    const info = lstatSync(join(w.outDir, name));
    if (!info.isFile()) throw new Error(`${name} in the output directory is not a file`);
    stats.saved.set(name, signature(info));
  }
}

/** Collision-free names: no saved file was ever written again (checked once, at the end). */
export function checkSavedFilesUnchanged(w: World, stats: FuzzStats): void {
  for (const [name, first] of stats.saved) {
    const now = signature(lstatSync(join(w.outDir, name)));
    if (now !== first)
      throw new Error(`${name} in the output directory was written again (${first} -> ${now})`);
  }
}

function signature(info: Stats): string {
  return `${info.size} ${info.mtimeMs} ${info.ino}`;
}

function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}
