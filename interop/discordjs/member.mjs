// Fidelity check: a simulated member (not the bot) logs in with its own
// token through an unmodified discord.js v14 client. Driven by sim/discord's
// TestDiscordJSMemberLogin.
//
// Environment:
//   SIM_API      REST base for discord.js, e.g. http://127.0.0.1:PORT/api
//   SIM_TOKEN    the member's token
//   SIM_CHANNEL  the text channel to talk in
//
// Protocol: one JSON object per stdout line. After login the script reports
// "ready" (its user and application ids), sends "hello from a member" and
// reports "sent"; it then waits for a message from someone else in the
// channel, reports "received" and exits 0.
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { deadline, emit, env, fail } from './script.mjs';

const { SIM_API, SIM_TOKEN, SIM_CHANNEL } = env('SIM_API', 'SIM_TOKEN', 'SIM_CHANNEL');

const timer = deadline(45);

const client = new Client({
  intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent],
  rest: { api: SIM_API },
});

client.once(Events.ClientReady, async (c) => {
  const channel = c.channels.cache.get(SIM_CHANNEL);
  emit('ready', { user: c.user.id, application: c.application?.id ?? null, channelCached: Boolean(channel) });
  const msg = await channel.send('hello from a member').catch(fail);
  emit('sent', { id: msg.id, author: msg.author.id });
});

client.on(Events.MessageCreate, async (m) => {
  if (m.channelId !== SIM_CHANNEL || m.author.id === client.user.id) return;
  emit('received', { id: m.id, author: m.author.id, content: m.content });
  clearTimeout(timer);
  await client.destroy();
  process.exit(0);
});

client.login(SIM_TOKEN).catch(fail);
