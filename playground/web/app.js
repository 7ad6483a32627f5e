// app.js: the text channels, the decision panel and the tuning controls.
// Everything goes through the simulators' control APIs (/discord/…,
// /openai/…, proxied by the playground) and the config file (/api/config).
'use strict';

const PG = {
  info: null,
  members: new Map(),   // user id → name
  channels: new Map(),  // channel id → {name, type, parent}
  messages: new Map(),  // message id → message
  tab: 'text',
  replyTo: null,
  typing: new Map(),    // user id → {channel, until}
  voice: new Map(),     // user id → voice channel id
  turns: new Map(),     // turn id → summary text (for the decision panel)
};

const $ = (sel) => document.querySelector(sel);
const el = (tag, props = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'dataset') Object.assign(e.dataset, v); else if (k === 'class') e.className = v; else e[k] = v;
  }
  for (const k of kids) e.append(k);
  return e;
};

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) { opts.headers['Content-Type'] = 'application/json'; opts.body = JSON.stringify(body); }
  const r = await fetch(path, opts);
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (_) { data = { error: text }; }
  return { status: r.status, ok: r.ok, data };
}

function nameOf(id) {
  if (PG.info && id === PG.info.bot_id) return PG.info.bot_name;
  return PG.members.get(id) || id;
}

function channelID() { return PG.tab === 'thread' ? PG.info.thread_id : PG.info.text_channel_id; }

// ---- text -----------------------------------------------------------------

function renderContent(text) {
  const frag = document.createDocumentFragment();
  const re = /<@!?(\d+)>/g;
  let last = 0, m;
  while ((m = re.exec(text)) !== null) {
    frag.append(text.slice(last, m.index));
    frag.append(el('span', { class: 'mention', textContent: '@' + nameOf(m[1]) }));
    last = re.lastIndex;
  }
  frag.append(text.slice(last));
  return frag;
}

function plainMentions(text) { return text.replace(/<@!?(\d+)>/g, (_, id) => '@' + nameOf(id)); }

function messageItem(m) {
  const li = el('li', { class: m.from_bot ? 'bot' : '', dataset: { id: m.id, author: m.author_id, channel: m.channel_id, replyTo: m.reply_to || '' } });
  const btn = el('button', { type: 'button', class: 'reply-btn', textContent: 'reply', title: 'reply to this message' });
  btn.addEventListener('click', () => startReply(m.id));
  li.append(btn);
  if (m.reply_to) {
    const ref = PG.messages.get(m.reply_to);
    const span = el('span', { class: 'ref', textContent: '↪ ' });
    span.append(ref ? renderContent(nameOf(ref.author_id) + ': ' + ref.content.slice(0, 80)) : 'a message');
    li.append(span);
  }
  li.append(el('span', { class: 'who', textContent: nameOf(m.author_id) }));
  if (m.from_bot) li.append(el('span', { class: 'bot-tag', textContent: 'BOT' }));
  const body = el('span', { class: 'content' });
  body.append(renderContent(m.content));
  li.append(body);
  if (m.edited) li.append(el('span', { class: 'muted small', textContent: ' (edited)' }));
  return li;
}

function renderMessages() {
  const list = $('#messages');
  const ch = channelID();
  list.replaceChildren(...[...PG.messages.values()].filter((m) => m.channel_id === ch).map(messageItem));
  list.scrollTop = list.scrollHeight;
  renderTyping();
}

function onMessage(m) {
  PG.messages.set(m.id, m);
  // A decision can arrive before its message: its row gets the turn now.
  for (const row of document.querySelectorAll(`#decision-rows tr[data-turn="${m.id}"]`)) setTurn(row, turnText(m));
  PG.typing.delete(m.author_id);
  if (m.channel_id === channelID()) {
    const list = $('#messages');
    const old = list.querySelector(`li[data-id="${m.id}"]`);
    const item = messageItem(m);
    if (old) old.replaceWith(item); else { list.append(item); list.scrollTop = list.scrollHeight; }
  }
  renderTyping();
}

function renderTyping() {
  const now = Date.now();
  const who = [];
  for (const [u, t] of PG.typing) {
    if (t.until < now) PG.typing.delete(u); else if (t.channel === channelID()) who.push(nameOf(u));
  }
  $('#typing').textContent = who.length ? who.join(', ') + (who.length > 1 ? ' are' : ' is') + ' typing…' : '';
  $('#typing').dataset.who = who.join(',');
}

function startReply(id) {
  const m = PG.messages.get(id);
  if (!m) return;
  PG.replyTo = id;
  $('#replying-to').textContent = nameOf(m.author_id) + ': ' + m.content.slice(0, 60);
  $('#replying').hidden = false;
  $('#text').focus();
}

function cancelReply() { PG.replyTo = null; $('#replying').hidden = true; }

async function send(ev) {
  ev.preventDefault();
  const content = $('#text').value.trim();
  if (!content) return;
  const body = { as: $('#as').value, channel: channelID(), content };
  if (PG.replyTo) body.reply_to = PG.replyTo;
  const r = await api('POST', '/discord/messages', body);
  $('#send-error').hidden = r.ok;
  if (!r.ok) { $('#send-error').textContent = (r.data && r.data.error) || 'send failed'; return; }
  $('#text').value = '';
  cancelReply();
}

function addMemberOption(id, name) {
  PG.members.set(id, name);
  const sel = $('#as');
  const you = name === PG.info.you_name;
  if (![...sel.options].some((o) => o.value === name)) sel.append(el('option', { value: name, textContent: you ? name + ' (you)' : name }));
  if (you) sel.value = name;
}

function selectTab(tab) {
  PG.tab = tab;
  for (const b of document.querySelectorAll('.tab')) b.classList.toggle('active', b.dataset.tab === tab);
  updatePlaceholder();
  cancelReply();
  renderMessages();
}

// updatePlaceholder names the open channel in the message box (once the stream has said its name).
function updatePlaceholder() {
  const ch = PG.channels.get(channelID());
  $('#text').placeholder = ch ? 'Message ' + (ch.type === 'thread' ? 'thread ' + ch.name : '#' + ch.name) : 'Message';
}

function onDiscordEvent(e) {
  switch (e.type) {
    case 'member': addMemberOption(e.member.id, e.member.name); if (window.PGMemory) window.PGMemory.onMember(e.member.id); break;
    case 'channel':
      PG.channels.set(e.channel.id, { name: e.channel.name, type: e.channel.type, parent: e.channel.parent_id });
      if (e.channel.id === PG.info.thread_id) $('#thread-name').textContent = e.channel.name;
      if (e.channel.id === channelID()) updatePlaceholder();
      break;
    case 'message': case 'message_update': onMessage(e.message); break;
    case 'message_delete': PG.messages.delete(e.id); renderMessages(); break;
    case 'typing': PG.typing.set(e.user_id, { channel: e.channel_id, until: Date.now() + 10000 }); renderTyping(); break;
    case 'voice_state': if (window.PGVoice) window.PGVoice.onVoiceState(e.user_id, e.channel_id || ''); break;
  }
}

// ---- decisions ------------------------------------------------------------

const latencyEvents = new Set(['sent_message', 'sent_reply', 'reply_skipped', 'stt_pipeline_reply_spoken', 'realtime_reply_spoken',
  'stt_pipeline_reply_interrupted', 'stt_pipeline_reply_skipped', 'stt_pipeline_reply_denied']);

function fmtTime(t) { return new Date(t).toLocaleTimeString([], { hour12: false }); }

function turnText(m) { return nameOf(m.author_id) + ': ' + plainMentions(m.content); }

// setTurn shows a row's turn, cut at 160 characters with the whole of it on hover.
function setTurn(row, said) {
  const td = row.querySelector('.turn');
  td.textContent = said.length > 160 ? said.slice(0, 159) + '…' : said;
  td.title = said;
}

function decisionRow(e) {
  const a = e.attrs;
  const turn = a.turnId || '';
  const m = PG.messages.get(turn);
  const said = m ? turnText(m)
    : (PG.turns.get(turn) || nameOf(a.userId || '') + (a.pipeline === 'voice' ? ' (voice; the transcript follows)' : ' (the message follows)'));
  // A confidence is shown only where one was measured: Stage A's name matcher or classifier.
  const conf = a.stage === 'A' && typeof a.confidence === 'number' && a.confidence > 0 ? a.confidence.toFixed(2) : '';
  const tr = el('tr', { dataset: { turn, pipeline: a.pipeline, stage: a.stage, outcome: a.outcome, reason: a.reason,
    signal: a.signal, force: String(!!a.force), eagerness: String(a.eagerness ?? ''), event: e.event, seq: String(e.seq) } });
  const stage = a.pipeline + ' ' + a.stage + (a.phase ? ' · ' + a.phase.replace('pre_generation', 'pre-gen') : '') + (a.pass ? ' · ' + a.pass : '');
  const signal = a.signal && a.signal !== 'unknown' ? a.signal : '';
  const cells = [fmtTime(e.time), stage, a.outcome + ' · ' + a.reason, [signal + (conf ? ' ' + conf : ''), a.force ? 'forced' : ''].filter(Boolean).join(' · '),
    a.stage === 'A' ? String(a.eagerness ?? '') : '', '', ''];
  const classes = ['', 'stage', 'outcome reason', 'signal', '', 'turn', 'latency'];
  cells.forEach((c, i) => tr.append(el('td', { class: classes[i], textContent: c })));
  setTurn(tr, said);
  if (a.classifierModel) tr.title = `classifier ${a.classifierModel} said ${JSON.stringify(a.classifierRaw)} in ${a.classifierLatency} ms`;
  if (window.PGTry) window.PGTry.markRow(tr);
  return tr;
}

// Phase names as the page shows them.
const phaseNames = { llm1: 'model', first_tts_byte: 'first TTS byte', first_packet: 'first audio', first_token: 'first token',
  first_sentence: 'first sentence' };
const textOrder = ['context', 'lookup', 'llm1', 'model', 'followup', 'send'];
// The voice turn's phases (voice.Phase), each counted from the end of the member's speech.
const voicePhases = new Set(['transcript', 'admission', 'first_token', 'first_sentence', 'first_tts_byte', 'first_packet']);

// latencyParts sorts a turn's latency phases: a text reply's phases in pipeline order (zero
// ones left out) and its total; a voice turn's times since the end of speech, earliest first.
function latencyParts(a) {
  const text = [], voice = [];
  let total = null;
  for (const [k, v] of Object.entries(a)) {
    if (typeof v !== 'number' || !k.endsWith('_ms')) continue;
    if (k.startsWith('latency_')) {
      const name = k.slice(8, -3);
      if (name === 'total') total = v; else if (Math.round(v) > 0) text.push([name, v]);
    } else if (voicePhases.has(k.slice(0, -3))) voice.push([k.slice(0, -3), v]);
  }
  text.sort((x, y) => textOrder.indexOf(x[0]) - textOrder.indexOf(y[0]));
  voice.sort((x, y) => x[1] - y[1]);
  return { text, voice, total };
}

// latencyCell fills a row's latency cell: a text reply's total, then its phases; a voice
// turn's steps, where one done before the speech ended is "early", not a negative number.
function latencyCell(td, a) {
  const { text, voice, total } = latencyParts(a);
  const label = (n) => phaseNames[n] || n.replaceAll('_', ' ');
  const parts = [];
  if (total !== null) {
    td.append(el('b', { textContent: Math.round(total) + ' total' }));
    parts.push(...text.map(([n, v]) => label(n) + ' ' + Math.round(v)));
    if (parts.length) td.append(' (' + parts.join(' · ') + ')');
  } else {
    voice.forEach(([n, v], i) => {
      if (i) td.append(' · ');
      if (v < 0) td.append(el('span', { class: 'early', textContent: label(n) + ' early', title: Math.round(-v) + ' ms before the speech ended' }));
      else td.append(label(n) + ' ' + Math.round(v));
    });
  }
  td.title = td.textContent + (total !== null ? ' (ms: the reply\'s total, then its phases)' : ' (ms after the end of speech; early: before it ended)');
  return td.textContent;
}

function onBotEvent(e) {
  const a = e.attrs || {};
  logEvent(e);
  if (window.PGTry) window.PGTry.onBotEvent(e);
  if (a.stage && a.pipeline && a.reason !== undefined) {
    $('#decision-rows').prepend(decisionRow(e));
    const rows = $('#decision-rows').children;
    while (rows.length > 300) rows[rows.length - 1].remove();
    return;
  }
  const turn = a.turn_id || a.message_id;
  if (a.transcript && turn) {
    const said = nameOf(a.user_id || a.reply_target) + ' (voice): ' + a.transcript;
    PG.turns.set(turn, said);
    for (const row of $('#decision-rows').querySelectorAll(`tr[data-turn="${turn}"]`)) setTurn(row, said);
  }
  if (turn && latencyEvents.has(e.event)) {
    const row = $('#decision-rows').querySelector(`tr[data-turn="${turn}"]`);
    if (row) {
      const td = row.querySelector('.latency');
      td.replaceChildren();
      const lt = latencyCell(td, a);
      if (lt) row.dataset.latency = lt;
      if (typeof a.cost_usd === 'number') {
        td.append(el('span', { class: 'cost', textContent: ' · $' + a.cost_usd.toFixed(6) }));
        row.dataset.cost = String(a.cost_usd);
      }
      row.dataset.result = e.event;
    }
  }
  if (e.event.startsWith('config_')) onConfigEvent(e);
  if (window.PGVoice) window.PGVoice.onBotEvent(e);
  if (window.PGMemory) window.PGMemory.onBotEvent(e);
}

function logEvent(e) {
  const a = e.attrs || {};
  const keys = ['provider', 'reason', 'outcome', 'turnId', 'turn_id', 'message_id', 'error', 'transcript', 'spoken', 'path'];
  const detail = keys.filter((k) => a[k] !== undefined && a[k] !== '').map((k) => k + '=' + String(a[k]).slice(0, 60)).join(' ');
  const li = el('li', { textContent: fmtTime(e.time) + ' ' + e.event + ' ' + detail, dataset: { event: e.event } });
  $('#log').prepend(li);
  while ($('#log').children.length > 200) $('#log').lastChild.remove();
}

// ---- tuning ---------------------------------------------------------------

const controls = [
  { key: 'activity.replyLevelInitiative', label: 'text eagerness (#general, thread)', kind: 'level' },
  { key: 'activity.replyLevelNonInitiative', label: 'text eagerness (elsewhere)', kind: 'level' },
  { key: 'voice.replyEagerness', label: 'voice eagerness', kind: 'level' },
  { key: 'permissions.allowInitiativeReplies', label: 'may join unaddressed talk', kind: 'bool' },
  { key: 'llm.directAddressClassifier.enabled', label: 'text direct-address classifier', kind: 'bool' },
  { key: 'memory.enabled', label: 'memory (facts about members)', kind: 'bool' },
  { key: 'voice.replyDecisionLlm.enabled', label: 'voice YES/NO classifier', kind: 'bool' },
  { key: 'llm.model', label: 'text reply model', kind: 'text' },
  { key: 'voice.generationLlm.model', label: 'voice reply model', kind: 'text' },
  { key: 'voice.replyDecisionLlm.model', label: 'voice classifier model', kind: 'text' },
  { key: 'llm.directAddressClassifier.model', label: 'text classifier model', kind: 'text' },
  { key: 'voice.sttPipeline.transcriptionModel', label: 'transcription model', kind: 'text' },
  { key: 'voice.sttPipeline.ttsModel', label: 'speech model', kind: 'text' },
];

function buildControls() {
  const box = $('#controls');
  for (const c of controls) {
    const row = el('div', { class: 'control', dataset: { key: c.key } });
    row.append(el('label', { textContent: c.label, htmlFor: 'ctl-' + c.key }));
    if (c.kind === 'level') {
      const range = el('input', { type: 'range', min: 0, max: 100, step: 1, id: 'ctl-' + c.key, dataset: { key: c.key } });
      const num = el('input', { type: 'number', min: 0, max: 100, dataset: { key: c.key }, title: 'type a value (outside 0-100 shows the validation error)' });
      range.addEventListener('input', () => { num.value = range.value; });
      range.addEventListener('change', () => setConfig({ [c.key]: Number(range.value) }));
      num.addEventListener('change', () => { if (num.value !== '') setConfig({ [c.key]: Number(num.value) }); });
      row.append(range, num);
    } else if (c.kind === 'bool') {
      const box2 = el('input', { type: 'checkbox', id: 'ctl-' + c.key, dataset: { key: c.key } });
      box2.addEventListener('change', () => setConfig({ [c.key]: box2.checked }));
      row.append(box2, el('span'));
    } else {
      const txt = el('input', { type: 'text', id: 'ctl-' + c.key, dataset: { key: c.key } });
      txt.addEventListener('change', () => setConfig({ [c.key]: txt.value }));
      row.append(txt, el('span'));
    }
    box.append(row);
  }
}

function showConfig(v) {
  PG.values = v.values;
  const parts = v.path.split('/');
  $('#config-path').textContent = parts.length > 2 ? '…/' + parts.slice(-2).join('/') : v.path;
  $('#config-path').title = v.path;
  $('#effective').textContent = v.effective;
  for (const input of document.querySelectorAll('#controls input')) {
    const val = v.values[input.dataset.key];
    if (val === undefined || document.activeElement === input) continue;
    if (input.type === 'checkbox') input.checked = !!val; else input.value = val;
    if (input.type === 'text') input.title = String(val);
  }
}

async function loadConfig() {
  const r = await api('GET', '/api/config');
  if (r.ok) showConfig(r.data);
}

async function setConfig(set) {
  const status = $('#config-status');
  status.dataset.outcome = 'pending';
  status.textContent = 'writing ' + Object.keys(set).join(', ') + '…';
  const r = await api('POST', '/api/config', { set });
  const v = r.data || {};
  if (v.path) showConfig(v);
  status.dataset.outcome = v.outcome || (r.ok ? 'reloaded' : 'error');
  switch (v.outcome) {
    case 'reloaded': status.textContent = '✓ the bot reloaded ' + Object.keys(set).join(', ') + ' = ' + Object.values(set).join(', '); break;
    case 'unchanged': status.textContent = 'no change'; break;
    case 'needs_restart': status.textContent = 'written; ' + (v.sections || []).join(', ') + ' take effect after a restart'; break;
    case 'rejected': status.textContent = '✗ the bot refused the edit and keeps its config: ' + v.error; break;
    default: status.textContent = (v.error || 'edit failed');
  }
}

function onConfigEvent(e) {
  if (e.event === 'config_reloaded') loadConfig();
}

// ---- start ----------------------------------------------------------------

function stream(path, onEvent, label) {
  const es = new EventSource(path);
  es.onmessage = (m) => onEvent(JSON.parse(m.data));
  es.onopen = () => { PG.connected = (PG.connected || 0) + 1; $('#conn').textContent = 'live'; $('#conn').dataset.state = 'live'; };
  es.onerror = () => { $('#conn').textContent = label + ' reconnecting…'; $('#conn').dataset.state = 'reconnecting'; };
  return es;
}

async function start() {
  const r = await api('GET', '/api/info');
  PG.info = r.data;
  const mode = $('#mode');
  mode.dataset.mode = PG.info.demo ? 'demo' : 'real';
  mode.textContent = PG.info.demo ? 'DEMO BRAIN (no OpenAI key)' : 'real models: ' + PG.info.model;
  if (PG.info.demo) {
    $('#mode-note').hidden = false;
    $('#mode-note').textContent = 'No OPENAI_API_KEY: the bot is real, its models are the OpenAI simulator\'s demo brain — short, ' +
      'deterministic replies that read your last message. In voice, what you type in the caption box is what you say. ' +
      'Set OPENAI_API_KEY and restart for real models.';
  }
  $('#mention').textContent = '@' + PG.info.bot_name;
  $('#demo-voice-note').hidden = !PG.info.demo;
  $('#control-link').href = PG.info.control_url + '/state';
  buildControls();
  loadConfig();
  $('#composer').addEventListener('submit', send);
  $('#cancel-reply').addEventListener('click', cancelReply);
  $('#mention').addEventListener('click', () => { const t = $('#text'); t.value = '<@' + PG.info.bot_id + '> ' + t.value; t.focus(); });
  $('#add-member').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const name = $('#new-member').value.trim();
    if (!name) return;
    const r2 = await api('POST', '/discord/members', { name });
    if (r2.ok) { $('#new-member').value = ''; $('#as').value = name; }
  });
  $('#set-key').addEventListener('submit', (ev) => {
    ev.preventDefault();
    let v = $('#value').value;
    try { v = JSON.parse(v); } catch (_) { /* a plain string */ }
    setConfig({ [$('#key').value.trim()]: v });
  });
  for (const b of document.querySelectorAll('.tab')) b.addEventListener('click', () => selectTab(b.dataset.tab));
  setInterval(renderTyping, 1000);
  stream('/discord/events', (e) => { onDiscordEvent(e); if (e.type === 'hello') selectTab(PG.tab); }, 'Discord');
  stream('/api/events', onBotEvent, 'bot');
  document.body.dataset.ready = '1';
}

start();
