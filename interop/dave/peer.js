// peer.js: one @snazzah/davey call member for banter's DAVE interop tests.
// It drives DAVESession exactly as @discordjs/voice 0.19 does (dist/index.js
// DAVESession wrapper and Networking handlers) and speaks newline-delimited
// JSON on stdin/stdout:
//   {cmd:"init", uid, channel}                         -> {}
//   {cmd:"op", op, hex?|json?}                          -> {out:[{op, hex}|{op, json}]}
//   {cmd:"enc", hex}                                    -> {hex}
//   {cmd:"dec", uid, hex}                               -> {hex} | {err}
//   {cmd:"state"}                                       -> {epoch, status, ready, auth, userIds}
//   {cmd:"bench", hex, uid, frames:[hex], opus}         -> {ns, frames:[hex]}
"use strict";
const readline = require("readline");
const { DAVESession } = require("@snazzah/davey");

let uid = "", channel = "", session = null, protocolVersion = 0;
const connected = new Set();
const pending = new Map(); // transition id -> protocol version

function keyPackage() {
  return { op: 26, hex: session.getSerializedKeyPackage().toString("hex") };
}

function reinit() {
  if (session) session.reinit(protocolVersion, uid, channel);
  else session = new DAVESession(protocolVersion, uid, channel);
  return [keyPackage()];
}

function execute(tid) {
  if (!pending.has(tid)) return;
  const v = pending.get(tid);
  pending.delete(tid);
  const old = protocolVersion;
  protocolVersion = v;
  if (old !== v && v === 0) session.setPassthroughMode(true, 24);
  else if (old === 0 && v > 0) session.setPassthroughMode(true, 10);
}

function handle(op, buf, json) {
  switch (op) {
    case 4:
      protocolVersion = json.dave_protocol_version;
      return protocolVersion > 0 ? reinit() : [];
    case 11: json.user_ids.forEach((u) => connected.add(u)); return [];
    case 13: connected.delete(json.user_id); return [];
    case 25: session.setExternalSender(buf); return [];
    case 27: {
      const res = session.processProposals(buf[0], buf.subarray(1), [...connected]);
      if (!res.commit) return [];
      const parts = res.welcome ? [res.commit, res.welcome] : [res.commit];
      return [{ op: 28, hex: Buffer.concat(parts).toString("hex") }];
    }
    case 29:
    case 30: {
      const tid = buf.readUInt16BE(0);
      try {
        if (op === 29) session.processCommit(buf.subarray(2));
        else session.processWelcome(buf.subarray(2));
      } catch (e) {
        return [{ op: 31, json: { transition_id: tid }, err: String(e) }, ...reinit()];
      }
      if (tid !== 0) {
        pending.set(tid, protocolVersion);
        return [{ op: 23, json: { transition_id: tid } }];
      }
      return [];
    }
    case 21:
      pending.set(json.transition_id, json.protocol_version);
      if (json.transition_id === 0) { execute(0); return []; }
      if (json.protocol_version === 0) session.setPassthroughMode(true, 24);
      return [{ op: 23, json: { transition_id: json.transition_id } }];
    case 22: execute(json.transition_id); return [];
    case 24:
      if (json.epoch === 1) { protocolVersion = json.protocol_version; return reinit(); }
      return [];
  }
  return [];
}

function run(msg) {
  switch (msg.cmd) {
    case "init": uid = msg.uid; channel = msg.channel; return {};
    case "op": {
      const buf = msg.hex !== undefined ? Buffer.from(msg.hex, "hex") : null;
      return { out: handle(msg.op, buf, msg.json) };
    }
    case "enc": {
      // @discordjs/voice encrypts only when the protocol is not 0 and the session is ready.
      const frame = Buffer.from(msg.hex, "hex");
      if (protocolVersion === 0 || !session.ready) return { hex: msg.hex };
      return { hex: session.encryptOpus(frame).toString("hex") };
    }
    case "dec": return { hex: session.decrypt(msg.uid, 0, Buffer.from(msg.hex, "hex")).toString("hex") };
    case "state": {
      const auth = session && session.getEpochAuthenticator();
      return {
        epoch: session && session.epoch !== null ? Number(session.epoch) : -1,
        status: session ? session.status : 0,
        ready: session ? session.ready : false,
        auth: auth ? auth.toString("hex") : "",
        userIds: session ? session.getUserIds() : [],
      };
    }
    case "bench": {
      // Encrypt one Opus frame and decrypt one peer frame per iteration.
      const opus = Buffer.from(msg.opus, "hex");
      const inFrames = msg.frames.map((h) => Buffer.from(h, "hex"));
      const out = new Array(inFrames.length);
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < inFrames.length; i++) {
        out[i] = session.encryptOpus(opus);
        session.decrypt(msg.uid, 0, inFrames[i]);
      }
      const ns = Number(process.hrtime.bigint() - t0);
      return { ns, frames: out.map((b) => b.toString("hex")) };
    }
  }
  throw new Error("unknown command " + msg.cmd);
}

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  let reply;
  try {
    reply = run(JSON.parse(line));
  } catch (e) {
    reply = { err: String(e && e.message ? e.message : e) };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
rl.on("close", () => process.exit(0));
