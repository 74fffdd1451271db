/**
 * Tiny binary fixtures for the content-type tools, resources and prompts.
 *
 * Kept deliberately minimal: conformance clients only check that the data is
 * present, base64 and labelled with the right MIME type, and small payloads
 * keep event-store replays cheap.
 */

/** A 1×1 PNG (a single blue pixel), base64-encoded. */
export const PIXEL_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mPQztkAAAINAUg5Z+/YAAAAAElFTkSuQmCC';

/** MIME type of {@link PIXEL_PNG_BASE64}. */
export const PNG_MIME_TYPE = 'image/png';

/** MIME type of {@link SHORT_WAV_BASE64}. */
export const WAV_MIME_TYPE = 'audio/wav';

/**
 * Builds a PCM WAV file: 8-bit mono, `sampleRate` Hz, a square wave.
 * Generated rather than embedded so the bytes are self-explanatory.
 */
function buildSquareWaveWav(sampleRate: number, durationMs: number, frequencyHz: number): Buffer {
  const samples = Math.round((sampleRate * durationMs) / 1000);
  const header = 44;
  const wav = Buffer.alloc(header + samples);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(header - 8 + samples, 4);
  wav.write('WAVE', 8, 'ascii');
  wav.write('fmt ', 12, 'ascii');
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate, 28); // byte rate = rate × 1 channel × 1 byte
  wav.writeUInt16LE(1, 32); // block align
  wav.writeUInt16LE(8, 34); // bits per sample
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(samples, 40);
  const halfPeriod = Math.max(1, Math.round(sampleRate / frequencyHz / 2));
  for (let i = 0; i < samples; i++) {
    // 8-bit PCM is unsigned: 128 is silence, so swing ±32 around it.
    wav[header + i] = Math.floor(i / halfPeriod) % 2 === 0 ? 160 : 96;
  }
  return wav;
}

/** A 50 ms, 440 Hz square-wave WAV, base64-encoded (~0.5 KiB). */
export const SHORT_WAV_BASE64 = buildSquareWaveWav(8000, 50, 440).toString('base64');
