// memory.js: the memory panel. What banter remembers about each member (GET /api/memory: the
// bot's own store, numbered as /memory show numbers it), and the forget controls, which run
// the bot's real /memory command as the member (POST /api/memory/{action}). The panel reloads
// when the bot's events say facts changed (memory_extracted, memory_*_forgotten), when a
// /memory command ran (playground_memory_command), when the config reloads and when a member
// joins the server.
'use strict';

(() => {
  const reloadOn = new Set(['memory_extracted', 'memory_fact_forgotten', 'memory_facts_forgotten', 'memory_member_forgotten',
    'playground_memory_command', 'config_reloaded']);
  let loading = null, again = false;

  // load reads the panel's data; a change while a read is under way reads again after it.
  async function load() {
    if (loading) { again = true; return loading; }
    loading = (async () => {
      do {
        again = false;
        const r = await api('GET', '/api/memory');
        if (r.ok) render(r.data); else $('#memory-status').textContent = (r.data && r.data.error) || 'cannot read memory';
      } while (again);
    })();
    try { await loading; } finally { loading = null; }
  }

  async function act(action, body, what) {
    const status = $('#memory-status');
    status.dataset.state = 'pending';
    status.textContent = what + '…';
    const r = await api('POST', '/api/memory/' + action, body);
    status.dataset.state = r.ok ? 'done' : 'error';
    status.textContent = r.ok ? what + ': ' + r.data.answer : '✗ ' + ((r.data && r.data.error) || action + ' failed');
    await load();
  }

  function sourceText(s) {
    if (!s.content) return 'a message no longer stored';
    const ch = PG.channels.get(s.channel_id);
    const where = ch ? (ch.type === 'thread' ? 'thread ' + ch.name : '#' + ch.name) : 'a channel';
    return `${where}: “${plainMentions(s.content).slice(0, 120)}”`;
  }

  function factItem(f, member) {
    const li = el('li', { dataset: { factId: String(f.id), number: String(f.number), member: member ? member.name : 'server' } });
    li.append(el('span', { class: 'statement', textContent: f.statement }));
    const when = fmtTime(f.created_at);
    const from = f.sources.map(sourceText).join('; ');
    li.append(el('span', { class: 'source small muted', textContent: ` ${when} · from ${from}`, title: 'noted ' + new Date(f.created_at).toLocaleString() }));
    if (member) {
      const b = el('button', { type: 'button', class: 'forget', textContent: 'forget', title: `run /memory forget number:${f.number} as ${member.name}` });
      b.addEventListener('click', () => act('forget', { member: member.name, fact_id: f.id }, `${member.name}: /memory forget number:${f.number}`));
      li.append(b);
    }
    return li;
  }

  function memberBlock(m) {
    const box = el('div', { class: 'mem-member', dataset: { member: m.name, user: m.id, paused: m.paused ? '1' : '0', facts: String(m.facts.length) } });
    const head = el('div', { class: 'row' }, el('b', { textContent: m.name }));
    if (m.paused) head.append(el('span', { class: 'paused-tag small', textContent: 'paused' }));
    const pause = el('button', { type: 'button', class: 'pause', textContent: m.paused ? 'resume' : 'pause',
      title: `run /memory ${m.paused ? 'resume' : 'pause'} as ${m.name}` });
    pause.addEventListener('click', () => act(m.paused ? 'resume' : 'pause', { member: m.name }, `${m.name}: /memory ${m.paused ? 'resume' : 'pause'}`));
    const forgetMe = el('button', { type: 'button', class: 'forget-me', textContent: 'forget me',
      title: `run /memory forget-me as ${m.name}: every fact about them and every stored message of theirs` });
    forgetMe.addEventListener('click', () => act('forget-me', { member: m.name }, `${m.name}: /memory forget-me`));
    head.append(el('span', { class: 'spacer' }), pause, forgetMe);
    box.append(head);
    if (m.facts.length === 0) box.append(el('p', { class: 'small muted', textContent: 'nothing remembered' }));
    else box.append(el('ol', { class: 'facts' }, ...m.facts.map((f) => factItem(f, m))));
    return box;
  }

  function render(v) {
    const panel = $('#memory');
    panel.dataset.enabled = v.enabled ? '1' : '0';
    $('#memory-state').textContent = v.enabled ? 'on' : 'off (memory.enabled)';
    const blocks = v.members.map(memberBlock);
    if (v.server_facts.length) {
      const box = el('div', { class: 'mem-member', dataset: { member: 'server', facts: String(v.server_facts.length) } }, el('b', { textContent: 'the server' }));
      box.append(el('ol', { class: 'facts' }, ...v.server_facts.map((f) => factItem(f, null))));
      blocks.push(box);
    }
    $('#memory-members').replaceChildren(...blocks);
  }

  window.PGMemory = {
    onBotEvent(e) { if (reloadOn.has(e.event)) load(); },
    // onMember reloads for a member the panel does not show yet (one added on the page).
    onMember(id) { if (!document.querySelector(`#memory .mem-member[data-user="${id}"]`)) load(); },
  };
  load();
})();
