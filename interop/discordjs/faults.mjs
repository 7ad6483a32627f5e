// Fidelity check for gateway faults: an unmodified discord.js v14 client
// stays logged in to banter's Discord simulator while the Go test
// (sim/discord's TestDiscordJSGatewayFaults) drops the socket, sends op 7
// Reconnect and op 9 Invalid Session, and withholds heartbeat ACKs. After
// each fault the Go side posts a message the client must still receive.
//
// Environment: SIM_API (REST base + "/api"), SIM_TOKEN.
// stdout, one JSON object per line: {"event":"ready"},
// {"event":"message","content":C}, {"event":"resumed"}, {"event":"done"}.
// stdin: "quit".
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { createInterface } from 'node:readline';

const { SIM_API, SIM_TOKEN } = process.env;
const emit = (event, data = {}) => console.log(JSON.stringify({ event, ...data }));
const fail = (err) => {
  console.error(err?.stack ?? String(err));
  process.exit(1);
};
if (!SIM_API || !SIM_TOKEN) fail('SIM_API and SIM_TOKEN are required');
const timer = setTimeout(() => fail(new Error('timed out after 55 s')), 55_000);

const client = new Client({
  intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent],
  rest: { api: SIM_API },
});
client.once(Events.ClientReady, () => emit('ready'));
client.on(Events.ShardResume, () => emit('resumed'));
client.on(Events.MessageCreate, (m) => {
  if (m.author.id !== client.user.id) emit('message', { content: m.content });
});
client.on(Events.Error, fail);

createInterface({ input: process.stdin }).on('line', async (line) => {
  if (line.trim() !== 'quit') return;
  clearTimeout(timer);
  await client.destroy();
  emit('done');
  process.exit(0);
});
client.login(SIM_TOKEN).catch(fail);
