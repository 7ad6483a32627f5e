// Fidelity peer for banter's voice simulator (sim/discord/voicesim).
//
// Runs an unmodified @discordjs/voice 0.19.2 VoiceConnection against the
// simulator. The main gateway is replaced by a minimal adapter (the
// documented DiscordGatewayAdapterCreator interface): when the library
// sends op 4 it answers with VOICE_STATE_UPDATE then VOICE_SERVER_UPDATE
// built from the environment, exactly as discord.js's guild adapter would.
//
// Environment: VOICE_ENDPOINT, VOICE_TOKEN, VOICE_SESSION_ID, GUILD_ID,
// CHANNEL_ID, BOT_USER_ID (the user this client is: a bot, or a member
// joining with the grant of the simulator's JoinVoice), PEER_USER_ID (whose
// audio to receive), and NODE_EXTRA_CA_CERTS (the simulator's CA; the
// library hard-codes wss://).
//
// Protocol with the Go test: one JSON object per line on stdout, in the order
// things happen; t is performance.now() in ms, one clock for every event
//   {"event":"ready"}                 connection is Ready
//   {"event":"opus","user":U,"hex":H,"t":T}  an Opus packet received from PEER_USER_ID
//   {"event":"speaking","user":U,"speaking":B,"t":T}  the receiver's speaking map: a
//                                     packet from U after none (true), none for 100 ms (false)
//   {"event":"spoken","frames":N,"t":T}  "play FILE": the file's last frame was sent
//                                     (the end of its audio), N of its frames sent
//   {"event":"played","frames":N,"encoded":M}  the tone or file finished playing: M
//                                     Opus frames encoded, N of them sent
//   {"event":"state","status":S}      every connection state change
//   {"event":"error","message":M}
//   {"event":"dave","version":V,"epoch":E,"auth":H,"ready":B}  answer to "dave"
//   {"event":"transitioned","id":N}   a DAVE transition was executed
//   {"event":"resumed","t":T}         "playafter": the file starts playing
// Commands on stdin, one per line: "play" (1 s, 440 Hz tone), "play FILE"
// (FILE: raw s16le 48 kHz stereo PCM), "playafter N FILE" (play FILE once N
// more Opus packets from PEER_USER_ID have been received: a member who goes on
// talking N × 20 ms into the peer's answer), "dave" (the DAVE session's
// protocol version, epoch and epoch authenticator, read through the
// connection's state), "quit".
import {
  joinVoiceChannel,
  entersState,
  VoiceConnectionStatus,
  createAudioPlayer,
  createAudioResource,
  StreamType,
  AudioPlayerStatus,
  EndBehaviorType,
} from '@discordjs/voice';
import { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';

// @discordjs/voice chooses its xchacha20 library with asynchronous imports when the module
// loads (trying these packages in this order, the first that loads wins), and fails with "no
// valid encryption package" if audio flows before that finishes. A real bot joins long after;
// against the simulator the first packet can arrive within milliseconds. The library does not
// export its promise, so this makes the same imports in the same order: the library's module ran
// first, each of its imports was asked for before ours and settles before ours, so when ours are
// done the library has its package (a fixed wait lost that race on a loaded machine).
for (const lib of ['sodium-native', 'sodium', 'libsodium-wrappers', '@stablelib/xchacha20poly1305', '@noble/ciphers/chacha.js']) {
  try {
    await import(lib);
    break;
  } catch {
    // not installed: the library goes on to the next as well
  }
}
await new Promise((resolve) => setImmediate(resolve)); // the library's continuation after its import

const env = (k) => {
  const v = process.env[k];
  if (!v) {
    emit({ event: 'error', message: `missing ${k}` });
    process.exit(2);
  }
  return v;
};

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

const endpoint = env('VOICE_ENDPOINT');
const token = env('VOICE_TOKEN');
const sessionId = env('VOICE_SESSION_ID');
const guildId = env('GUILD_ID');
const channelId = env('CHANNEL_ID');
const botUserId = env('BOT_USER_ID');
const peerUserId = env('PEER_USER_ID');

// The adapter: what discord.js's Guild#voiceAdapterCreator does, minus the
// main gateway. VOICE_STATE_UPDATE must come before VOICE_SERVER_UPDATE.
const adapterCreator = (methods) => ({
  sendPayload(payload) {
    if (payload.op === 4 && payload.d.channel_id) {
      setImmediate(() => {
        methods.onVoiceStateUpdate({
          guild_id: guildId,
          channel_id: payload.d.channel_id,
          user_id: botUserId,
          session_id: sessionId,
          deaf: false,
          mute: false,
          self_deaf: payload.d.self_deaf,
          self_mute: payload.d.self_mute,
          self_video: false,
          suppress: false,
          request_to_speak_timestamp: null,
        });
        methods.onVoiceServerUpdate({ token, guild_id: guildId, endpoint });
      });
    }
    return true;
  },
  destroy() {},
});

const connection = joinVoiceChannel({
  channelId,
  guildId,
  adapterCreator,
  selfDeaf: false,
  selfMute: false,
  debug: true,
});
connection.on('debug', (m) => process.stderr.write(`[djs] ${m}\n`));
connection.on('error', (e) => emit({ event: 'error', message: String(e) }));
connection.on('stateChange', (_, next) => emit({ event: 'state', status: next.status }));
connection.on('transitioned', (id) => emit({ event: 'transitioned', id }));

try {
  await entersState(connection, VoiceConnectionStatus.Ready, 15_000);
} catch (e) {
  emit({ event: 'error', message: `not ready: ${e}` });
  process.exit(1);
}
emit({ event: 'ready' });

const stream = connection.receiver.subscribe(peerUserId, {
  end: { behavior: EndBehaviorType.Manual },
});
// afterPeer is a "playafter" waiting for the peer's packets: left to come, and start.
let afterPeer = null;
stream.on('data', (pkt) => {
  emit({ event: 'opus', user: peerUserId, hex: Buffer.from(pkt).toString('hex'), t: performance.now() });
  if (afterPeer && --afterPeer.left === 0) {
    const { start } = afterPeer;
    afterPeer = null;
    start();
  }
});
connection.receiver.speaking.on('start', (user) => emit({ event: 'speaking', user, speaking: true, t: performance.now() }));
connection.receiver.speaking.on('end', (user) => emit({ event: 'speaking', user, speaking: false, t: performance.now() }));

const player = createAudioPlayer();
connection.subscribe(player);
player.on('error', (e) => emit({ event: 'error', message: String(e) }));

function tone(seconds, freq) {
  const n = 48000 * seconds;
  const buf = Buffer.alloc(n * 4);
  for (let i = 0; i < n; i++) {
    const v = Math.round(12000 * Math.sin((2 * Math.PI * freq * i) / 48000));
    buf.writeInt16LE(v, 4 * i);
    buf.writeInt16LE(v, 4 * i + 2);
  }
  return buf;
}

// Audio is encoded by djs's own pipeline (a Raw resource: prism-media's Opus
// encoder on opusscript, what a bot or member client playing PCM uses) before
// it is played through the AudioPlayer. Played straight from the encoder, a
// frame the encoder has not finished when its 20 ms slot comes is replaced by
// the player's silence (and five in a row end the track): on a loaded machine
// the audio would arrive with holes, pauses that are not in it. Encoded first,
// every frame is ready at its slot, so what is sent does not depend on the
// machine's speed; the frames are the encoder's, silence in the PCM included.
async function encode(pcm) {
  const raw = createAudioResource(Readable.from([pcm]), { inputType: StreamType.Raw });
  const frames = [];
  for await (const f of raw.playStream) frames.push(f);
  return frames;
}

// Count the frames of what is playing that the connection really sends: the
// player prepares a packet (one of ours, or its own silence) and dispatches it
// at the next slot. Ours are told apart by identity: the resource hands the
// player the very Buffers it was made of.
let playing = null; // { index: Map<Buffer, number>, sent, last }
let prepared = -1;
const prepare = connection.prepareAudioPacket.bind(connection);
connection.prepareAudioPacket = (pkt) => {
  prepared = playing?.index.get(pkt) ?? -1;
  return prepare(pkt);
};
const dispatch = connection.dispatchAudio.bind(connection);
connection.dispatchAudio = () => {
  const sent = dispatch();
  if (sent && prepared >= 0) {
    playing.sent++;
    if (prepared === playing.last) emit({ event: 'spoken', frames: playing.sent, t: performance.now() });
  }
  if (sent) prepared = -1;
  return sent;
};

// play plays the tone, or the raw PCM in file, and reports "played" when the
// player is idle again.
async function play(file) {
  start(await encode(file ? await readFile(file) : tone(1, 440)));
}

// playAfter plays file once n more packets from the peer have come. The file is encoded at
// once, so that it starts playing at the n-th packet (the peer's first n × 20 ms of audio).
async function playAfter(n, file) {
  const encoded = readFile(file).then(encode);
  await new Promise((resolve) => {
    afterPeer = { left: n, start: resolve };
  });
  const frames = await encoded;
  emit({ event: 'resumed', t: performance.now() });
  start(frames);
}

function start(frames) {
  playing = { index: new Map(frames.map((f, i) => [f, i])), sent: 0, last: frames.length - 1 };
  const resource = createAudioResource(Readable.from(frames), { inputType: StreamType.Opus });
  player.play(resource);
  player.once(AudioPlayerStatus.Playing, () => {
    player.once(AudioPlayerStatus.Idle, () => emit({ event: 'played', frames: playing.sent, encoded: frames.length }));
  });
}

const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const [cmd, ...args] = line.trim().split(' ');
  switch (cmd) {
    case 'play':
      play(args.join(' ')).catch((e) => emit({ event: 'error', message: `play: ${e}` }));
      break;
    case 'playafter':
      playAfter(Number(args[0]), args.slice(1).join(' ')).catch((e) => emit({ event: 'error', message: `playafter: ${e}` }));
      break;
    case 'dave': {
      const dave = connection.state.networking?.state?.dave;
      const auth = dave?.session?.getEpochAuthenticator?.();
      emit({
        event: 'dave',
        version: dave?.protocolVersion ?? 0,
        epoch: dave?.session?.epoch != null ? Number(dave.session.epoch) : -1,
        auth: auth ? Buffer.from(auth).toString('hex') : '',
        ready: Boolean(dave?.session?.ready),
      });
      break;
    }
    case 'quit':
      player.stop(true);
      connection.destroy();
      emit({ event: 'bye' });
      setTimeout(() => process.exit(0), 100);
      break;
  }
});
rl.on('close', () => process.exit(0));
