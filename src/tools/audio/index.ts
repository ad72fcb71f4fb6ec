import type { AnyToolDefinition } from '../define.js';
import { audioSpeech } from './audio-speech.js';
import { audioTranscribe } from './audio-transcribe.js';

/** The `audio` group: speech (text to an audio file) and transcription (audio to text). */
export const audioTools: readonly AnyToolDefinition[] = [audioSpeech, audioTranscribe];
