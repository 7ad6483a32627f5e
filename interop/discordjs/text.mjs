// Fidelity check: an unmodified discord.js v14 client against banter's
// Discord simulator (sim/discord). Driven by sim/discord's
// TestDiscordJSFidelity, which starts the simulator, runs this script and
// plays the human side.
//
// Environment:
//   SIM_API      REST base for discord.js, e.g. http://127.0.0.1:PORT/api
//   SIM_TOKEN    the bot token
//   SIM_CHANNEL  the text channel to talk in
//
// Protocol: one JSON object per stdout line ({"event": ...}). After login
// the script registers a guild slash command (PUT bulk overwrite) and
// reports "ready"; the Go side then posts "ping from go" as a human and
// invokes /ping. The script answers both (typing, send, reply, fetch; an
// interaction reply) and exits 0 when both are done, 1 with a message on
// stderr otherwise.
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { deadline, emit, env, fail } from './script.mjs';

const { SIM_API, SIM_TOKEN, SIM_CHANNEL } = env('SIM_API', 'SIM_TOKEN', 'SIM_CHANNEL');

const timer = deadline(45);

const client = new Client({
  intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent],
  rest: { api: SIM_API },
});

let pending = 2; // the message flow and the interaction
const finish = async () => {
  if (--pending > 0) return;
  clearTimeout(timer);
  await client.destroy();
  emit('done');
  process.exit(0);
};

client.once(Events.ClientReady, async (c) => {
  const channel = c.channels.cache.get(SIM_CHANNEL);
  const commands = await channel.guild.commands
    .set([{ name: 'ping', description: 'Ping!' }])
    .catch(fail);
  emit('ready', {
    commands: [...commands.values()].map((cmd) => cmd.name),
    user: c.user.id,
    bot: c.user.bot,
    application: c.application?.id ?? null,
    guilds: c.guilds.cache.size,
    channelCached: Boolean(channel),
    guildAvailable: channel?.guild?.available ?? false,
  });
});

client.on(Events.MessageCreate, async (message) => {
  try {
    if (message.author.id === client.user.id || message.content !== 'ping from go') return;
    emit('received', { id: message.id, author: message.author.id, content: message.content, guild: message.guildId });
    await message.channel.sendTyping();
    const sent = await message.channel.send('hello from discord.js');
    const reply = await message.reply('reply from discord.js');
    emit('sent', { id: sent.id, reply: reply.id, replyRef: reply.reference?.messageId ?? null });
    const fetched = await message.channel.messages.fetch({ limit: 10 });
    const older = await message.channel.messages.fetch({ limit: 10, before: reply.id });
    const one = await message.channel.messages.fetch(message.id);
    emit('fetched', {
      ids: [...fetched.keys()],
      before: [...older.keys()],
      single: one.content,
    });
    await finish();
  } catch (err) {
    fail(err);
  }
});

client.on(Events.InteractionCreate, async (interaction) => {
  try {
    if (!interaction.isChatInputCommand()) return;
    emit('interaction', { id: interaction.id, command: interaction.commandName, user: interaction.user.id, channel: interaction.channelId });
    await interaction.reply('pong from discord.js');
    await finish();
  } catch (err) {
    fail(err);
  }
});

client.on(Events.Error, fail);
client.login(SIM_TOKEN).catch(fail);
