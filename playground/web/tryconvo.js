// tryconvo.js: "Try a conversation" plays a short scripted chat in #general
// through the live bot at the current settings, as a script would: each line
// is a POST /discord/messages as its member, and the next line waits for the
// bot's verdict on the last (a reply sent, a [SKIP], a Stage A deny). The
// decision panel marks the run's rows and sums it up, so moving a slider and
// trying again shows what changes.
'use strict';

// The script: a few members, chatter, questions to the room, a line
// addressed to the bot, a line meant for someone else. {you} is the page's
// member, {bot} the bot's mention. kind is what a person would call the line.
const TRY_SCRIPT = [
  { as: 'alice', text: 'morning all', kind: 'greeting' },
  { as: 'bob', text: 'hey! brb, grabbing a coffee', kind: 'brb' },
  { as: 'alice', text: 'anyone know a good pizza place near the station?', kind: 'question to the room' },
  { as: '{you}', text: 'lol', kind: 'chatter' },
  { as: 'bob', text: "i'm back", kind: 'chatter' },
  { as: 'alice', text: "what's everyone up to this weekend?", kind: 'question to the room' },
  { as: '{you}', text: '{bot} what should we order tonight?', kind: 'addressed' },
  { as: 'bob', text: 'alice, did you see the match last night?', kind: 'to someone else' },
  { as: 'alice', text: 'just finished my first 10k run', kind: 'news' },
];

// Events that end a line's turn, and what they mean for the summary.
const TRY_VERDICTS = {
  sent_reply: 'answered', sent_message: 'answered', reply_skipped: 'quiet ([SKIP])',
  reply_rate_limited: 'over the prompt budget', reply_failed: 'failed', send_failed: 'failed',
  message_ignored: 'ignored', turn_shed: 'shed', turn_coalesced: 'answered with another',
};

const TRY = {
  run: 0,
  running: false,
  turns: new Map(),   // message id → {run, n}
  waiters: new Map(), // message id → resolve(verdict)
  history: [],        // "run N at LEVEL: A of B", one per finished run
};

function tq(sel) { return document.querySelector(sel); }

// tryVerdict reads a bot event: the verdict on one of the run's lines, if it is one.
function tryVerdict(e) {
  const a = e.attrs || {};
  if (e.event === 'reply_admission' && a.outcome === 'deny') return { id: a.turnId, verdict: 'quiet (Stage A: ' + a.reason + ')' };
  const v = TRY_VERDICTS[e.event];
  if (!v || !a.message_id) return null;
  return { id: a.message_id, verdict: a.placeholder === true ? 'placeholder' : v };
}

// waitVerdict resolves with the bot's verdict on message id, or after a guard.
function waitVerdict(id) {
  return new Promise((resolve) => {
    const guard = setTimeout(() => { TRY.waiters.delete(id); resolve('no verdict yet'); }, 60000);
    TRY.waiters.set(id, (v) => { clearTimeout(guard); resolve(v); });
  });
}

function tryLine(line) {
  const who = line.as === '{you}' ? PG.info.you_name : line.as;
  return { who, text: line.text.replace('{bot}', '<@' + PG.info.bot_id + '>'), kind: line.kind };
}

// markerRow is a row of the decision panel that starts or ends a run.
function markerRow(text, run, edge) {
  const tr = el('tr', { class: 'run-marker', dataset: { run: String(run), edge } });
  tr.append(el('td', { colSpan: 7, textContent: text }));
  return tr;
}

async function tryConversation() {
  if (TRY.running) return;
  TRY.running = true;
  const run = ++TRY.run;
  const level = (PG.values || {})['activity.replyLevelInitiative'];
  const btn = tq('#try');
  btn.disabled = true;
  selectTab('text');
  const status = tq('#try-status');
  const list = el('ol', { class: 'try-lines' });
  status.replaceChildren(el('span', { textContent: `Run ${run} at text eagerness ${level}: playing ${TRY_SCRIPT.length} lines…` }), list);
  status.hidden = false;
  status.dataset.run = String(run);
  status.dataset.done = '0';
  tq('#decision-rows').prepend(markerRow(`▶ Try a conversation, run ${run}: text eagerness ${level}`, run, 'start'));
  let answered = 0;
  for (const [i, raw] of TRY_SCRIPT.entries()) {
    const line = tryLine(raw);
    const li = el('li', { textContent: `${line.who}: ${plainMentions(line.text)} (${line.kind}) … ` });
    list.append(li);
    const r = await api('POST', '/discord/messages', { as: line.who, channel: PG.info.text_channel_id, content: line.text });
    if (!r.ok) {
      li.append(el('b', { class: 'error', textContent: (r.data && r.data.error) || 'send failed' }));
      break;
    }
    TRY.turns.set(r.data.id, { run, n: i + 1 });
    for (const row of document.querySelectorAll(`#decision-rows tr[data-turn="${r.data.id}"]`)) markRunRow(row);
    const verdict = await waitVerdict(r.data.id);
    if (verdict === 'answered') answered++;
    li.dataset.verdict = verdict;
    li.append(el('b', { textContent: verdict }));
  }
  status.firstChild.textContent = `Run ${run} at text eagerness ${level}: the bot answered ${answered} of ${TRY_SCRIPT.length} lines.`;
  TRY.history.push(`run ${run} at ${level}: ${answered} of ${TRY_SCRIPT.length}`);
  if (TRY.history.length > 1) status.prepend(el('span', { id: 'try-history', textContent: 'Earlier: ' + TRY.history.slice(0, -1).slice(-4).join(' · ') }));
  status.dataset.done = '1';
  status.dataset.answered = String(answered);
  tq('#decision-rows').prepend(markerRow(`■ run ${run} done: answered ${answered} of ${TRY_SCRIPT.length} at text eagerness ${level}`, run, 'end'));
  btn.disabled = false;
  TRY.running = false;
}

// markRunRow marks a decision row that belongs to a run.
function markRunRow(tr) {
  const t = TRY.turns.get(tr.dataset.turn);
  if (!t) return;
  tr.dataset.run = String(t.run);
  tr.classList.add('in-run');
  tr.querySelector('td').title = `Try a conversation, run ${t.run}, line ${t.n}`;
}

window.PGTry = {
  onBotEvent(e) {
    const v = tryVerdict(e);
    if (!v || !v.id) return;
    const w = TRY.waiters.get(v.id);
    if (w) { TRY.waiters.delete(v.id); w(v.verdict); }
  },
  markRow: markRunRow,
};

tq('#try').addEventListener('click', tryConversation);
