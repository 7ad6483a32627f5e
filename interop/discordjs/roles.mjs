// Fidelity check: an unmodified discord.js v14 client, logged in as the bot with GUILDS but
// not GUILD_MEMBERS (as banter), follows role changes made while it is connected in its cache.
// Driven by sim/discord's TestDiscordJSRoles.
//
// Environment:
//   SIM_API      REST base for discord.js, e.g. http://127.0.0.1:PORT/api
//   SIM_TOKEN    the bot token
//   SIM_GUILD    the guild the Go side changes
//
// Protocol: one JSON object per stdout line. After login the script reports "ready"; then it
// reports each role created ("roleCreate", with its rawPosition, as Discord sent it, and the
// position discord.js ranks it at among the guild's roles), updated ("roleUpdate") and deleted ("roleDelete"),
// and each update of its own member ("meUpdate": the roles in its cache and the bot role
// discord.js finds by tags.bot_id), all read from the client's cache. It exits 0 after the
// first deletion.
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { deadline, emit, env, fail } from './script.mjs';

const { SIM_API, SIM_TOKEN, SIM_GUILD } = env('SIM_API', 'SIM_TOKEN', 'SIM_GUILD');

const timer = deadline(45);

const client = new Client({
  intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages],
  rest: { api: SIM_API },
});

const cached = (id) => client.guilds.cache.get(SIM_GUILD)?.roles.cache.get(id);

client.once(Events.ClientReady, (c) => {
  emit('ready', { guildCached: c.guilds.cache.has(SIM_GUILD) });
});

client.on(Events.GuildRoleCreate, (role) => {
  const r = cached(role.id);
  emit('roleCreate', {
    id: role.id, name: r?.name, managed: r?.managed, botId: r?.tags?.botId ?? null,
    rawPosition: r?.rawPosition, position: r?.position,
  });
});

client.on(Events.GuildRoleUpdate, (_old, role) => {
  const r = cached(role.id);
  emit('roleUpdate', { id: role.id, name: r?.name, permissions: r?.permissions.bitfield.toString() });
});

client.on(Events.GuildMemberUpdate, (_old, member) => {
  if (member.id !== client.user.id) return;
  const me = client.guilds.cache.get(SIM_GUILD).members.me;
  emit('meUpdate', { roles: [...me.roles.cache.keys()], botRole: me.roles.botRole?.id ?? null });
});

client.on(Events.GuildRoleDelete, async (role) => {
  emit('roleDelete', { id: role.id, cached: Boolean(cached(role.id)) });
  clearTimeout(timer);
  await client.destroy();
  process.exit(0);
});

client.login(SIM_TOKEN).catch(fail);
