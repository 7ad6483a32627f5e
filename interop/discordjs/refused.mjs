// Fidelity check: the bot sends, through an unmodified discord.js v14 client, to a channel
// where a permission overwrite denies it Send Messages. Driven by sim/discord's
// TestDiscordJSSendRefused.
//
// Environment:
//   SIM_API      REST base for discord.js, e.g. http://127.0.0.1:PORT/api
//   SIM_TOKEN    the bot's token
//   SIM_CHANNEL  the channel it may not send in
//
// Protocol: one JSON object per stdout line. After login the script sends "hello" and reports
// "refused" with the DiscordAPIError's HTTP status, code and message (or "sent" if the send
// succeeded), then exits 0.
import { Client, DiscordAPIError, Events, GatewayIntentBits } from 'discord.js';
import { deadline, emit, env, fail } from './script.mjs';

const { SIM_API, SIM_TOKEN, SIM_CHANNEL } = env('SIM_API', 'SIM_TOKEN', 'SIM_CHANNEL');

const timer = deadline(45);

const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: SIM_API } });

client.once(Events.ClientReady, async (c) => {
  const channel = await c.channels.fetch(SIM_CHANNEL).catch(fail);
  try {
    const msg = await channel.send('hello');
    emit('sent', { id: msg.id });
  } catch (err) {
    if (!(err instanceof DiscordAPIError)) fail(err);
    emit('refused', { status: err.status, code: err.code, message: err.rawError?.message ?? err.message });
  }
  clearTimeout(timer);
  await client.destroy();
  process.exit(0);
});

client.login(SIM_TOKEN).catch(fail);
