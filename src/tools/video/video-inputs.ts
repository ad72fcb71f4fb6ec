import { formatBytes, sniffImageMime } from '../../files/files.js';
import { openInputFile, readUpTo } from '../../files/input-files.js';
import { mediaTypesOf } from '../../files/media-types.js';
import { isHttpUrl } from '../../lib/urls.js';
import { UserError } from '../../lib/user-error.js';
import type { ToolContext } from '../define.js';
import { decodeJobHandle, looksLikeJobHandle } from './job-handle.js';
import { readJob } from './video-follow.js';
import { describeJobError } from './video-results.js';
import { MAX_WAIT_SECONDS } from './wait.js';

/** A local image is sent inline as a data URL, so it is kept small. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/** The image types of the media table, as a data: URL names them: png|jpeg|gif|webp. */
const IMAGE_SUBTYPES = mediaTypesOf('image')
  .map((type) => type.mime.slice('image/'.length))
  .join('|');
const DATA_IMAGE_URL = new RegExp(`^data:image/(${IMAGE_SUBTYPES});base64,[A-Za-z0-9+/]+={0,2}$`);

/**
 * The starting image of an image-to-video generation: a URL given as is, or a local file under
 * the input roots, checked to really be an image (by its bytes, not its name), as a data URL.
 */
export async function resolveImage(
  imageUrl: string | undefined,
  imagePath: string | undefined,
  ctx: ToolContext,
): Promise<{ url: string } | undefined> {
  if (imageUrl !== undefined && imagePath !== undefined) {
    throw new UserError('Give image_url or image_path, not both.');
  }
  if (imageUrl !== undefined) {
    if (isHttpUrl(imageUrl) || DATA_IMAGE_URL.test(imageUrl)) return { url: imageUrl };
    throw new UserError(
      `image_url must be an http(s) URL or a data:image/(${IMAGE_SUBTYPES});base64 URL; for a local file use image_path.`,
    );
  }
  if (imagePath === undefined) return undefined;
  const { inputRoots, baseDir } = await ctx.workspace();
  const file = await openInputFile(imagePath, inputRoots, baseDir, MAX_IMAGE_BYTES);
  // Read through the checked descriptor, one byte past the limit to notice a file that grew.
  const bytes = await readUpTo(file.handle, MAX_IMAGE_BYTES + 1).finally(() => file.handle.close());
  if (bytes.length > MAX_IMAGE_BYTES) {
    throw new UserError(
      `${imagePath} is ${formatBytes(bytes.length)}; the limit is ${formatBytes(MAX_IMAGE_BYTES)}.`,
    );
  }
  const mime = sniffImageMime(bytes.subarray(0, 16));
  if (!mime) {
    throw new UserError(
      `${imagePath} is not a PNG, JPEG, GIF or WebP image (judged by its content, not its name).`,
    );
  }
  return { url: `data:${mime};base64,${bytes.toString('base64')}` };
}

/**
 * The video an edit or extension starts from. The service takes only a URL, so a job_id is
 * resolved to its finished video's URL with one (free) status read.
 */
export async function resolveStartingVideo(video: string, tool: string, ctx: ToolContext): Promise<string> {
  if (looksLikeJobHandle(video)) {
    const ref = decodeJobHandle(video);
    const state = await readJob(ref, ctx, ctx.signal);
    const statusTool = ctx.toolName('video_status');
    if (state.status === 'running') {
      const progress = state.progress !== null ? ` (${Math.round(state.progress)}% done)` : '';
      throw new UserError(
        `The video job ${video} is not finished yet${progress}, so there is no video to start from. ` +
          `Wait for it with ${statusTool} (job_id "${video}", wait_seconds up to ${MAX_WAIT_SECONDS}), then call ${tool} again. Nothing was submitted.`,
      );
    }
    if (state.status === 'failed' && state.error) {
      throw new UserError(
        `The video job ${video} failed (${describeJobError(state.error)}), so it has no video to start from. Nothing was submitted.`,
      );
    }
    if (!state.videoUrl) {
      throw new UserError(
        `The video job ${video} is done but the service gave no usable video URL; pass the video's URL instead. Nothing was submitted.`,
      );
    }
    return state.videoUrl;
  }
  if (isHttpUrl(video)) return video;
  throw new UserError(
    `video must be the job_id (vj_...) of a finished video job or an http(s) URL of a video; got "${video.slice(0, 60)}". ` +
      'A local file cannot be sent: the service needs a URL.',
  );
}
