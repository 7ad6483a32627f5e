// Fidelity check for voice signalling: an unmodified discord.js v14 client
// logs in to banter's Discord simulator (sim/discord) and joins a voice
// channel with @discordjs/voice through discord.js's own guild adapter, so
// op 4, VOICE_STATE_UPDATE and VOICE_SERVER_UPDATE travel over the
// simulated main gateway, and the voice connection goes to the simulator's
// voice server (sim/discord/voicesim). Driven by sim/discord's
// TestDiscordJSVoiceThroughGateway.
//
// Environment: SIM_API (REST base + "/api"), SIM_TOKEN, SIM_GUILD,
// SIM_VOICE_CHANNEL, SIM_PEER (a member whose audio to receive), and
// NODE_EXTRA_CA_CERTS (the voice server's CA; the library hard-codes wss).
//
// stdout, one JSON object per line:
//   {"event":"ready"}                          the voice connection is Ready
//   {"event":"opus","hex":H}                   an Opus packet from SIM_PEER
//   {"event":"played"}                         the tone finished
//   {"event":"left"}                           destroyed (op 4 with null sent)
// stdin commands: "play" (0.6 s, 440 Hz), "quit".
import { Client, Events, GatewayIntentBits } from 'discord.js';
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

const { SIM_API, SIM_TOKEN, SIM_GUILD, SIM_VOICE_CHANNEL, SIM_PEER } = process.env;
const emit = (event, data = {}) => console.log(JSON.stringify({ event, ...data }));
const fail = (err) => {
  console.error(err?.stack ?? String(err));
  process.exit(1);
};
if (!SIM_API || !SIM_TOKEN || !SIM_GUILD || !SIM_VOICE_CHANNEL || !SIM_PEER) fail('missing SIM_* environment');
const timer = setTimeout(() => fail(new Error('timed out after 50 s')), 50_000);

const client = new Client({
  intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildVoiceStates],
  rest: { api: SIM_API },
});

function tone(seconds, freq) {
  const n = Math.round(48000 * seconds);
  const buf = Buffer.alloc(n * 4);
  for (let i = 0; i < n; i++) {
    const v = Math.round(12000 * Math.sin((2 * Math.PI * freq * i) / 48000));
    buf.writeInt16LE(v, 4 * i);
    buf.writeInt16LE(v, 4 * i + 2);
  }
  return buf;
}

client.once(Events.ClientReady, async (c) => {
  try {
    const guild = c.guilds.cache.get(SIM_GUILD);
    const connection = joinVoiceChannel({
      channelId: SIM_VOICE_CHANNEL,
      guildId: SIM_GUILD,
      adapterCreator: guild.voiceAdapterCreator,
      selfDeaf: false,
      selfMute: false,
      daveEncryption: false,
    });
    connection.on('error', fail);
    await entersState(connection, VoiceConnectionStatus.Ready, 20_000);
    emit('ready');

    const stream = connection.receiver.subscribe(SIM_PEER, { end: { behavior: EndBehaviorType.Manual } });
    stream.on('data', (pkt) => emit('opus', { hex: Buffer.from(pkt).toString('hex') }));

    const player = createAudioPlayer();
    connection.subscribe(player);
    player.on('error', fail);

    const rl = createInterface({ input: process.stdin });
    rl.on('line', async (line) => {
      switch (line.trim()) {
        case 'play':
          player.play(createAudioResource(Readable.from([tone(0.6, 440)]), { inputType: StreamType.Raw }));
          player.once(AudioPlayerStatus.Playing, () => player.once(AudioPlayerStatus.Idle, () => emit('played')));
          break;
        case 'quit':
          player.stop(true);
          connection.destroy();
          emit('left');
          clearTimeout(timer);
          // Let the op 4 leave reach the gateway before closing it.
          setTimeout(async () => {
            await client.destroy();
            process.exit(0);
          }, 200);
          break;
      }
    });
  } catch (err) {
    fail(err);
  }
});

client.on(Events.Error, fail);
client.login(SIM_TOKEN).catch(fail);
