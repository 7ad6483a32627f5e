// charts.js: two small live charts from the bot's /metrics (Prometheus text
// format): decisions by reason, and the time to first audio of voice replies.
'use strict';

const C = { tfa: [], lastSum: 0, lastCount: 0 };

// parseMetrics returns [{name, labels, value}] for the Prometheus text format.
function parseMetrics(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line || line[0] === '#') continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    if (m[3]) for (const l of m[3].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}

// drawBars draws one bar per entry, its label in full (the label column is as wide as the
// longest label; a label that still does not fit is cut with "…" and the canvas's title lists
// every entry in full).
function drawBars(canvas, entries) {
  const g = canvas.getContext('2d');
  g.clearRect(0, 0, canvas.width, canvas.height);
  g.font = '11px system-ui, sans-serif';
  canvas.title = entries.map(([label, v]) => label + ': ' + v).join('\n');
  if (!entries.length) { g.fillStyle = '#888'; g.fillText('no decisions yet', 8, 20); return; }
  const max = Math.max(...entries.map((e) => e[1]));
  const rowH = Math.min(18, (canvas.height - 4) / entries.length);
  const labelW = Math.min(Math.max(...entries.map(([label]) => g.measureText(label).width)) + 8, canvas.width * 0.62);
  const barW = canvas.width - labelW - 34;
  entries.forEach(([label, v], i) => {
    const y = 2 + i * rowH;
    const w = barW * v / max;
    g.fillStyle = label.includes('deny') || label.includes('skip') ? '#c0392b' : '#5865f2';
    g.fillRect(labelW, y + 2, Math.max(w, 1), rowH - 4);
    g.fillStyle = '#333';
    g.fillText(fitText(g, label, labelW - 6), 2, y + rowH - 5);
    g.fillText(String(v), labelW + 4 + w, y + rowH - 5);
  });
}

// fitText cuts s with "…" to fit width pixels.
function fitText(g, s, width) {
  if (g.measureText(s).width <= width) return s;
  while (s.length > 1 && g.measureText(s + '…').width > width) s = s.slice(0, -1);
  return s + '…';
}

function drawLine(canvas, points) {
  const g = canvas.getContext('2d');
  g.clearRect(0, 0, canvas.width, canvas.height);
  g.font = '11px system-ui, sans-serif';
  if (!points.length) { g.fillStyle = '#888'; g.fillText('no voice replies yet', 8, 20); return; }
  const max = Math.max(1, ...points.map((p) => p.v));
  g.strokeStyle = '#1f8b4c';
  g.beginPath();
  points.forEach((p, i) => {
    const x = 30 + (canvas.width - 40) * (points.length === 1 ? 1 : i / (points.length - 1));
    const y = canvas.height - 15 - (canvas.height - 30) * p.v / max;
    if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
    g.fillStyle = '#1f8b4c';
    g.fillRect(x - 2, y - 2, 4, 4);
  });
  g.stroke();
  g.fillStyle = '#333';
  g.fillText(max.toFixed(1) + ' s', 2, 12);
  g.fillText('last ' + points[points.length - 1].v.toFixed(2) + ' s', canvas.width - 80, 12);
}

async function pollMetrics() {
  let text;
  try {
    const r = await fetch('/metrics');
    if (!r.ok) return;
    text = await r.text();
  } catch (_) { return; }
  const ms = parseMetrics(text);
  const spend = ms.find((m) => m.name === 'banter_budget_global_spent_usd');
  if (spend) {
    const day = document.getElementById('day-spend');
    day.textContent = 'spent today: $' + spend.value.toFixed(4);
    day.dataset.usd = String(spend.value);
  }
  const byReason = new Map();
  for (const m of ms) {
    if (m.name !== 'banter_decisions_total' || !m.value) continue;
    const key = m.labels.pipeline + ' ' + m.labels.stage + ' ' + m.labels.reason;
    byReason.set(key, (byReason.get(key) || 0) + m.value);
  }
  const entries = [...byReason.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10);
  drawBars(document.getElementById('chart-reasons'), entries);
  document.getElementById('chart-reasons').dataset.series = entries.map((e) => e.join('=')).join(';');
  let sum = 0, count = 0;
  for (const m of ms) {
    if (m.labels.phase !== 'first_packet') continue;
    if (m.name === 'banter_voice_turn_phase_seconds_sum') sum = m.value;
    if (m.name === 'banter_voice_turn_phase_seconds_count') count = m.value;
  }
  if (count > C.lastCount) {
    C.tfa.push({ t: Date.now(), v: (sum - C.lastSum) / (count - C.lastCount) });
    if (C.tfa.length > 60) C.tfa.shift();
  }
  C.lastSum = sum;
  C.lastCount = count;
  drawLine(document.getElementById('chart-tfa'), C.tfa);
}

setInterval(pollMetrics, 3000);
pollMetrics();
