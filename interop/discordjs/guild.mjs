// Fidelity check: an unmodified discord.js v14 client, logged in as the bot with GUILDS,
// GUILD_MEMBERS and GUILD_VOICE_STATES, follows a member's removal while in voice and changes
// made during an outage of the guild, in its cache.
// Driven by sim/discord's TestDiscordJSKickAndOutage.
//
// Environment:
//   SIM_API      REST base for discord.js, e.g. http://127.0.0.1:PORT/api
//   SIM_TOKEN    the bot token
//   SIM_GUILD    the guild the Go side changes
//
// Protocol: one JSON object per stdout line, each read from the client's cache. After login
// "ready" (the voice states cached). Then, in the order discord.js emits them:
// "memberRemove" (the member's id) and
// "voiceStateUpdate" (the user, old and new channel, whether the member and its voice state are
// cached); "unavailable" when the guild's outage begins; "available" when it ends, with the
// guild's roles (name, rawPosition, position), members (id, roles, nick) and the events
// discord.js emitted for the guild while it was unavailable. It exits 0 after "available".
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { deadline, emit, env, fail } from './script.mjs';

const { SIM_API, SIM_TOKEN, SIM_GUILD } = env('SIM_API', 'SIM_TOKEN', 'SIM_GUILD');

const timer = deadline(45);

const client = new Client({
  // GuildPresences: GUILD_CREATE then lists every member (without it, only the bot and voice members).
  intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMembers, GatewayIntentBits.GuildPresences, GatewayIntentBits.GuildVoiceStates],
  rest: { api: SIM_API },
});

const guild = () => client.guilds.cache.get(SIM_GUILD);
let outage = null; // the events emitted while the guild is unavailable

client.once(Events.ClientReady, () => {
  const voice = [...(guild()?.voiceStates.cache.values() ?? [])].map((s) => ({ user: s.id, channel: s.channelId }));
  emit('ready', { voice });
});

client.on(Events.GuildMemberRemove, (member) => {
  outage?.push('guildMemberRemove');
  emit('memberRemove', { id: member.id });
});

client.on(Events.VoiceStateUpdate, (oldState, newState) => {
  outage?.push('voiceStateUpdate');
  emit('voiceStateUpdate', {
    id: newState.id,
    oldChannel: oldState.channelId ?? null,
    newChannel: newState.channelId ?? null,
    memberCached: guild().members.cache.has(newState.id),
    voiceChannel: guild().voiceStates.cache.get(newState.id)?.channelId ?? null,
  });
});

for (const e of [Events.GuildRoleCreate, Events.GuildRoleUpdate, Events.GuildMemberAdd, Events.GuildMemberUpdate]) {
  client.on(e, () => outage?.push(e));
}

client.on(Events.GuildUnavailable, (g) => {
  if (g.id !== SIM_GUILD) return;
  outage = [];
  emit('unavailable', { available: g.available });
});

client.on(Events.GuildAvailable, async (g) => {
  if (g.id !== SIM_GUILD || outage === null) return; // discord.js emits it for the first GUILD_CREATE too
  const roles = [...g.roles.cache.values()].map((r) => ({ id: r.id, name: r.name, rawPosition: r.rawPosition, position: r.position }));
  const members = [...g.members.cache.values()].map((m) => ({ id: m.id, roles: [...m.roles.cache.keys()].filter((r) => r !== g.id), nick: m.nickname }));
  emit('available', { roles, members, duringOutage: outage ?? [] });
  clearTimeout(timer);
  await client.destroy();
  process.exit(0);
});

client.login(SIM_TOKEN).catch(fail);
