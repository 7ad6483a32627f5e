// Google's own npm client, @google/genai's Live API, against banter's Gemini simulator
// (sim/openai, the Gemini face). Driven by sim/openai's TestGeminiNodeSDK: it connects with
// GEMINI_BASE_URL, speaks two activities (the second interrupted by a third), waits for the
// test's goAway, then resumes on a new connection with the last handle and asks a question
// whose answer needs the first connection's conversation. Every step is a JSON line on stdout.
import { GoogleGenAI, Modality } from '@google/genai';

const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const ai = new GoogleGenAI({
  apiKey: 'gk-test',
  httpOptions: { baseUrl: process.env.GEMINI_BASE_URL, apiVersion: 'v1beta' },
});

// tone16k is ms of a 220 Hz tone, pcm16 16 kHz mono, base64.
function tone16k(ms) {
  const n = 16 * ms;
  const b = Buffer.alloc(2 * n);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(0.3 * 32767 * Math.sin((2 * Math.PI * 220 * i) / 16000)), 2 * i);
  return b;
}

// connect opens a session whose messages queue up for next().
async function connect(handle) {
  const queue = [];
  let wake = null;
  const push = (m) => { queue.push(m); if (wake) { wake(); wake = null; } };
  const session = await ai.live.connect({
    model: 'gemini-3.8-live',
    config: {
      responseModalities: [Modality.AUDIO],
      systemInstruction: 'You are banter.',
      speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } },
      realtimeInputConfig: { automaticActivityDetection: { disabled: true } },
      inputAudioTranscription: {},
      outputAudioTranscription: {},
      sessionResumption: handle ? { handle } : {},
      contextWindowCompression: { slidingWindow: {} },
    },
    callbacks: {
      onmessage: (m) => push({ m }),
      onerror: (e) => push({ error: String(e && e.message) }),
      onclose: (e) => push({ close: { code: e.code, reason: e.reason } }),
    },
  });
  const next = async () => {
    while (queue.length === 0) await new Promise((r) => { wake = r; });
    const x = queue.shift();
    if (!x.m) throw new Error('socket ended: ' + JSON.stringify(x));
    return x.m;
  };
  return { session, next };
}

function speak(session, ms) {
  session.sendRealtimeInput({ activityStart: {} });
  const pcm = tone16k(ms);
  for (let off = 0; off < pcm.length; off += 3200) {
    session.sendRealtimeInput({ audio: { mimeType: 'audio/pcm;rate=16000', data: pcm.subarray(off, off + 3200).toString('base64') } });
  }
  session.sendRealtimeInput({ activityEnd: {} });
}

// turn reads one turn to its turnComplete and the resumption handle after it. onAudio runs
// once, at the first audio part.
async function turn(next, onAudio) {
  const t = { input: '', output: '', audio: 0, interrupted: false, handle: '' };
  for (;;) {
    const m = await next();
    const sc = m.serverContent;
    if (!sc) continue;
    if (sc.inputTranscription) t.input += sc.inputTranscription.text || '';
    if (sc.outputTranscription) t.output += sc.outputTranscription.text || '';
    for (const p of (sc.modelTurn && sc.modelTurn.parts) || []) {
      if (p.inlineData) {
        if (p.inlineData.mimeType !== 'audio/pcm;rate=24000') throw new Error('audio MIME type ' + p.inlineData.mimeType);
        if (t.audio === 0 && onAudio) onAudio();
        t.audio += Buffer.from(p.inlineData.data, 'base64').length;
      }
    }
    if (sc.interrupted) t.interrupted = true;
    if (sc.turnComplete) {
      const u = await next();
      if (!u.sessionResumptionUpdate) throw new Error('no handle after turnComplete: ' + JSON.stringify(u));
      t.handle = u.sessionResumptionUpdate.newHandle;
      return t;
    }
  }
}

const first = await connect('');
const setup = await first.next();
out({ event: 'setup', setupComplete: !!setup.setupComplete });
await first.next(); // the connection's first resumption handle
speak(first.session, 1200);
out({ event: 'turn', ...(await turn(first.next)) });
speak(first.session, 600);
const cut = await turn(first.next, () => first.session.sendRealtimeInput({ activityStart: {} }));
out({ event: 'turn', ...cut });
out({ event: 'await_goaway' });
let m;
do { m = await first.next(); } while (!m.goAway);
out({ event: 'goaway', timeLeft: m.goAway.timeLeft });
first.session.close();

const second = await connect(cut.handle);
await second.next(); // setupComplete
await second.next(); // handle
second.session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'what did I ask first?' }] }], turnComplete: true });
out({ event: 'turn', ...(await turn(second.next)) });
second.session.close();
out({ event: 'done' });
