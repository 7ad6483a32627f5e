// Codec interop peer for audio/opus tests: opusscript (libopus compiled to
// WebAssembly), the Opus implementation @discordjs/voice falls back to, so
// what a discord.js member would decode. Unmodified package from
// interop/node_modules (NODE_PATH).
//
//   node opusscript.js decode IN OUT  IN: [u16le length][packet]...  OUT: s16le 48 kHz stereo
//   node opusscript.js encode IN OUT  IN: s16le 48 kHz stereo        OUT: [u16le length][packet]...
"use strict";
const fs = require("fs");
const OpusScript = require("opusscript");

const [mode, inPath, outPath] = process.argv.slice(2);
const input = fs.readFileSync(inPath);
const out = [];
if (mode === "decode") {
  const dec = new OpusScript(48000, 2, OpusScript.Application.VOIP);
  for (let off = 0; off < input.length; ) {
    const n = input.readUInt16LE(off);
    off += 2;
    out.push(Buffer.from(dec.decode(input.subarray(off, off + n))));
    off += n;
  }
  dec.delete();
} else if (mode === "encode") {
  const enc = new OpusScript(48000, 2, OpusScript.Application.VOIP);
  enc.setBitrate(64000);
  const frameBytes = 960 * 2 * 2;
  for (let off = 0; off + frameBytes <= input.length; off += frameBytes) {
    // opusscript takes the PCM as a Buffer of s16le bytes (README usage).
    const pkt = enc.encode(input.subarray(off, off + frameBytes), 960);
    const len = Buffer.alloc(2);
    len.writeUInt16LE(pkt.length);
    out.push(len, Buffer.from(pkt));
  }
  enc.delete();
} else {
  console.error("usage: opusscript.js decode|encode IN OUT");
  process.exit(2);
}
fs.writeFileSync(outPath, Buffer.concat(out));
