// voice.js: the voice room. The browser joins as the page's simulated
// member (PG.info.you_name) through the Discord simulator's control API: POST /voice/join, then
// the /voice/stream WebSocket carries the microphone (getUserMedia → 48 kHz
// mono PCM → the member's Opus stream) to the room and what the member hears
// (the bot's voice, decoded) back to the speakers.
'use strict';

const RATE = 48000;

const V = {
  ctx: null,          // AudioContext at 48 kHz
  ws: null,           // the voice stream
  capture: null,      // AudioWorkletNode: 20 ms frames of everything we say
  micGain: null,      // the microphone into capture (0 when muted)
  mic: null,          // MediaStream, null without a microphone
  out: null,          // GainNode all heard audio goes through, to the speakers
  analyser: null,     // on the output: proof the audio reaches it
  next: new Map(),    // user id → when their next chunk plays (AudioContext time)
  speaking: new Set(),
  joined: false,
  muted: false,
  stats: { botSamples: 0, botPeak: 0, outPeak: 0, outMs: 0, sent: 0 },
};

function vq(sel) { return document.querySelector(sel); }

function setMicStatus(state, text) {
  const p = vq('#mic-status');
  p.dataset.state = state;
  p.textContent = text;
}

async function ensureAudio() {
  if (!V.ctx) {
    V.ctx = new AudioContext({ sampleRate: RATE });
    await V.ctx.audioWorklet.addModule('/static/capture-worklet.js');
    V.capture = new AudioWorkletNode(V.ctx, 'capture');
    V.capture.port.onmessage = (m) => sendFrame(m.data);
    const sink = V.ctx.createGain(); // the worklet must be pulled by the graph; nothing of it is heard
    sink.gain.value = 0;
    V.capture.connect(sink).connect(V.ctx.destination);
    V.out = V.ctx.createGain();
    V.analyser = V.ctx.createAnalyser();
    V.analyser.fftSize = 2048;
    V.out.connect(V.analyser).connect(V.ctx.destination);
    setInterval(watchOutput, 50);
  }
  if (V.ctx.state !== 'running') await V.ctx.resume();
}

// sendFrame sends one 20 ms frame of what we say; digital silence (a muted
// or absent microphone) is not sent, so the member's talk spurt ends.
function sendFrame(f) {
  if (!V.ws || V.ws.readyState !== WebSocket.OPEN) return;
  let any = false;
  const pcm = new Int16Array(f.length);
  for (let i = 0; i < f.length; i++) {
    const s = Math.max(-1, Math.min(1, f[i]));
    pcm[i] = s < 0 ? s * 32768 : s * 32767;
    if (pcm[i] !== 0) any = true;
  }
  if (!any) return;
  V.ws.send(pcm.buffer);
  V.stats.sent += f.length;
}

// watchOutput measures the signal at the speakers' input.
function watchOutput() {
  if (!V.analyser) return;
  const buf = new Float32Array(V.analyser.fftSize);
  V.analyser.getFloatTimeDomainData(buf);
  let sum = 0, peak = 0;
  for (const x of buf) { sum += x * x; peak = Math.max(peak, Math.abs(x)); }
  if (Math.sqrt(sum / buf.length) > 0.005) V.stats.outMs += 50;
  V.stats.outPeak = Math.max(V.stats.outPeak, peak);
  renderStats();
}

function renderStats() {
  const p = vq('#audio-stats');
  p.dataset.botSamples = String(V.stats.botSamples);
  p.dataset.botPeak = String(V.stats.botPeak);
  p.dataset.outPeak = V.stats.outPeak.toFixed(3);
  p.dataset.outMs = String(V.stats.outMs);
  p.textContent = V.stats.botSamples
    ? `Heard ${(V.stats.botSamples / RATE).toFixed(1)} s of ${PG.info.bot_name}'s voice (decoded); ${(V.stats.outMs / 1000).toFixed(1)} s of signal at the speakers.`
    : 'No audio heard yet.';
}

// play schedules one chunk of heard audio (16-bit stereo at 48 kHz).
function play(user, pcm) {
  const n = pcm.length / 2;
  if (!n) return;
  const buf = V.ctx.createBuffer(2, n, RATE);
  const L = buf.getChannelData(0), R = buf.getChannelData(1);
  let peak = 0;
  for (let i = 0; i < n; i++) {
    L[i] = pcm[2 * i] / 32768;
    R[i] = pcm[2 * i + 1] / 32768;
    peak = Math.max(peak, Math.abs(pcm[2 * i]));
  }
  const src = V.ctx.createBufferSource();
  src.buffer = buf;
  src.connect(V.out);
  const at = Math.max(V.ctx.currentTime + 0.06, V.next.get(user) || 0);
  src.start(at);
  V.next.set(user, at + n / RATE);
  if (user === PG.info.bot_id) {
    V.stats.botSamples += n;
    V.stats.botPeak = Math.max(V.stats.botPeak, peak);
  }
}

function setLink(e2ee) {
  const p = vq('#voice-link');
  p.dataset.e2ee = e2ee;
  p.textContent = {
    off: 'Connected.',
    active: 'Connected, end-to-end encrypted (DAVE).',
    pending: 'Connected; setting up end-to-end encryption (DAVE)…',
    inactive: 'Connected; waiting for end-to-end encryption (DAVE)…',
  }[e2ee] || 'Connected.';
}

function onStreamMessage(m) {
  if (typeof m.data === 'string') {
    const msg = JSON.parse(m.data);
    if (msg.type === 'ready' || msg.type === 'e2ee') setLink(msg.e2ee || 'off');
    if (msg.type === 'speaking') {
      if (msg.speaking) V.speaking.add(msg.user_id); else V.speaking.delete(msg.user_id);
      renderParticipants();
    }
    return;
  }
  const b = new Uint8Array(m.data);
  const n = b[0];
  const user = new TextDecoder().decode(b.subarray(1, 1 + n));
  const pcm = new Int16Array(m.data.slice(1 + n));
  play(user, pcm);
}

async function openMic() {
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    setMicStatus('unavailable', 'This browser offers no microphone here (it needs http://127.0.0.1 or localhost). You can listen and use the caption box; text works as usual.');
    return;
  }
  try {
    V.mic = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: false, autoGainControl: false } });
  } catch (err) {
    const denied = err && (err.name === 'NotAllowedError' || err.name === 'SecurityError');
    const missing = err && (err.name === 'NotFoundError' || err.name === 'OverconstrainedError');
    setMicStatus(denied ? 'denied' : missing ? 'missing' : 'error',
      (denied ? 'Microphone permission denied.' : missing ? 'No microphone found.' : 'The microphone could not be opened (' + (err && err.name) + ').') +
      ' You can listen and use the caption box; text works as usual.');
    return;
  }
  V.micGain = V.ctx.createGain();
  V.ctx.createMediaStreamSource(V.mic).connect(V.micGain).connect(V.capture);
  setMicMuted(vq('#join-muted').checked);
  vq('#mute').disabled = false;
}

function setMicMuted(muted) {
  V.muted = muted;
  if (V.micGain) V.micGain.gain.value = muted ? 0 : 1;
  vq('#mute').textContent = muted ? 'Unmute mic' : 'Mute mic';
  if (V.mic) setMicStatus(muted ? 'muted' : 'live', muted ? 'Microphone muted.' : 'Microphone live: speak, or type below.');
}

async function join() {
  const btn = vq('#join');
  btn.disabled = true;
  V.muted = vq('#join-muted').checked;
  try {
    await ensureAudio();
    const r = await fetch('/discord/voice/join', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ as: PG.info.you_name, channel: 'Voice' }) });
    if (!r.ok && r.status !== 409) throw new Error((await r.json()).error);
    const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/discord/voice/stream?as=' + encodeURIComponent(PG.info.you_name) + '&leave_on_close=1');
    ws.binaryType = 'arraybuffer';
    ws.onmessage = onStreamMessage;
    await new Promise((ok, bad) => { ws.onopen = ok; ws.onerror = () => bad(new Error('the voice stream did not open')); });
    ws.onclose = () => { if (V.joined) leave(); };
    V.ws = ws;
    V.joined = true;
    btn.textContent = 'Leave voice';
    vq('#caption').disabled = vq('#say').disabled = !PG.info.demo;
    await openMic();
  } catch (err) {
    setMicStatus('error', 'Could not join the voice room: ' + err.message);
  } finally {
    btn.disabled = false;
  }
}

function leave() {
  V.joined = false;
  if (V.ws) { const ws = V.ws; V.ws = null; ws.close(); }
  if (V.mic) { for (const t of V.mic.getTracks()) t.stop(); V.mic = null; V.micGain = null; }
  V.speaking.clear();
  vq('#join').textContent = 'Join voice';
  vq('#voice-link').textContent = 'Not connected.';
  vq('#voice-link').dataset.e2ee = '';
  vq('#mute').disabled = true;
  vq('#caption').disabled = vq('#say').disabled = true;
  setMicStatus('off', 'Not in the voice room.');
  renderParticipants();
}

// say speaks the caption into the room as you: the demo brain's speech
// (from the OpenAI simulator) goes into the same stream as the microphone,
// and the caption is queued as the transcript of that utterance.
async function say(ev) {
  ev.preventDefault();
  const text = vq('#caption').value.trim();
  if (!text || !V.joined) return;
  const note = vq('#caption-note');
  const q = await fetch('/openai/_sim/script', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ transcripts: [text] }) });
  if (!q.ok) { note.textContent = 'could not queue the caption: ' + q.status; return; }
  const r = await fetch('/openai/v1/audio/speech', {
    method: 'POST', headers: { 'Content-Type': 'application/json', 'Authorization': 'Bearer sk-playground-demo' },
    body: JSON.stringify({ model: 'gpt-4o-mini-tts', input: text, voice: 'alloy', response_format: 'pcm' }),
  });
  if (!r.ok) { note.textContent = 'speech failed: ' + r.status; return; }
  const pcm = new Int16Array(await r.arrayBuffer());
  const buf = V.ctx.createBuffer(1, pcm.length, 24000);
  const ch = buf.getChannelData(0);
  for (let i = 0; i < pcm.length; i++) ch[i] = pcm[i] / 32768;
  const src = V.ctx.createBufferSource();
  src.buffer = buf;
  src.connect(V.capture);
  src.start();
  note.textContent = 'you said: “' + text + '”';
  note.dataset.said = text;
  vq('#caption').value = '';
}

function renderParticipants() {
  const ul = vq('#participants');
  const voiceID = PG.info && PG.info.voice_channel_id;
  const inRoom = [...PG.voice.entries()].filter(([, ch]) => ch === voiceID).map(([u]) => u);
  ul.replaceChildren(...inRoom.map((u) => {
    const li = document.createElement('li');
    li.textContent = nameOf(u);
    if (u === PG.info.bot_id) li.append(Object.assign(document.createElement('span'), { className: 'bot-tag', textContent: 'BOT' }));
    li.dataset.user = u;
    li.classList.toggle('speaking', V.speaking.has(u));
    li.dataset.speaking = V.speaking.has(u) ? '1' : '0';
    return li;
  }));
}

window.PGVoice = {
  onVoiceState(user, channel) {
    if (channel) PG.voice.set(user, channel); else PG.voice.delete(user);
    renderParticipants();
  },
  onBotEvent(e) {
    const notice = vq('#voice-notice');
    const a = e.attrs || {};
    if (e.event === 'voice_barge_in' || e.event === 'voice_false_end' || e.event === 'stt_pipeline_reply_interrupted') {
      if (e.event === 'stt_pipeline_reply_interrupted') {
        notice.dataset.interrupted = String(Number(notice.dataset.interrupted) + 1);
        notice.dataset.botSamplesAtStop = String(V.stats.botSamples);
      }
      const who = nameOf(a.user_id || a.interrupted_by || '');
      // A false end: the member had not finished; the whole of what they said is answered next.
      const falseEnd = e.event === 'voice_false_end' || a.false_end === true;
      notice.textContent = PG.info.bot_name + ' stopped: ' + who + (falseEnd ? ' was not done yet.' : ' spoke over it.');
    } else if (e.event === 'stt_pipeline_reply_spoken') {
      notice.textContent = PG.info.bot_name + ' said: “' + (a.spoken || '') + '”';
    }
  },
};

vq('#join').addEventListener('click', () => (V.joined ? leave() : join()));
vq('#mute').addEventListener('click', () => setMicMuted(!V.muted));
vq('#caption-form').addEventListener('submit', say);
