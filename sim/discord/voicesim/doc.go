// Package voicesim is banter's simulated Discord voice server: the voice
// gateway (WebSocket, version 8, over TLS) and the UDP media server with a
// selective forwarding unit, on loopback. Production voice code (and any
// third-party client) is pointed at it by configuration: the endpoint from
// VOICE_SERVER_UPDATE and the simulator's CA certificate. Nothing in here
// is imported by production code.
//
// It is written from Discord's documentation
// (https://discord.com/developers/docs/topics/voice-connections, the voice
// opcode and close-code tables) and from what @discordjs/voice 0.19.2 sends
// and requires, independently of banter's client in discord/voice, so that
// the two implementations check each other.
//
// # Starting it
//
//	s := voicetest.Serve(t)                    // tests (package voicetest): closed in t.Cleanup
//	s, err := voicesim.New(voicesim.Options{}) // elsewhere; call s.Close()
//
// New generates a CA and a server certificate (ECDSA P-256, SANs
// DNS:localhost, IP:127.0.0.1, ::1), listens for TLS on 127.0.0.1:0 and
// opens a UDP socket on 127.0.0.1:0.
//
//   - Endpoint() is "127.0.0.1:PORT", what VOICE_SERVER_UPDATE carries;
//     clients dial wss://ENDPOINT/?v=8 (URL() returns exactly that).
//   - CACertPEM() is the CA in PEM; CAFile() is a file holding it
//     (NODE_EXTRA_CA_CERTS for Node clients), removed by Close.
//   - Close makes members leave, closes every WebSocket with 1001, waits
//     for every goroutine and removes the CA file.
//
// # Authorization (what the main-gateway simulator calls)
//
// Authorize(Session{GuildID, ChannelID, UserID, SessionID, Token, SelfDeaf})
// admits one join; the main gateway calls it when it sends
// VOICE_SERVER_UPDATE. A newer Authorize for the same user and guild makes
// older tokens invalid; if the user is connected in another channel, that
// connection is closed with 4014 (moved). Revoke(guildID, userID) ends a
// session (the user left or was kicked): the token dies, a connected client
// is closed with 4014 and the channel gets op 13. Sessions otherwise live
// until Revoke, a new Identify for the same user and guild, a
// non-resumable close, or Close: a client whose socket just died keeps its
// session (SSRC, key, buffered messages) so that it can resume.
//
// # Voice gateway
//
// Only ?v=8 is served; any other or missing version is closed with 4020
// (Discord documents no code for this; 4020 "bad request" is the
// simulator's choice). On connect the server sends Hello (op 8,
// heartbeat_interval in ms, Options.HeartbeatInterval, default 13750) and
// accepts Identify before or after it (@discordjs/voice does not wait).
//
//	op 0  Identify {server_id, user_id, session_id, token, max_dave_protocol_version}
//	      checked against the authorized Session: unknown token, or guild or
//	      user not matching → 4004; session_id not matching → 4006; a second
//	      Identify → 4005; Options.RequireDAVE and max < 1 → 4017. Answered
//	      with Ready (op 2) {ssrc, ip, port, modes, heartbeat_interval: 1};
//	      the last field is the bogus value Discord sends, clients ignore it.
//	      modes lists aead_aes256_gcm_rtpsize then
//	      aead_xchacha20_poly1305_rtpsize (Options.Modes). The others in the
//	      channel get op 11 {user_ids:[new user]}.
//	op 1  Select Protocol {protocol:"udp", data:{address, port, mode}}:
//	      protocol other than udp → 4012; a mode not offered → 4016; an
//	      address that is not an IP → 4020. Answered with Session Description
//	      (op 4) {mode, secret_key: 32 ints, dave_protocol_version (0, or
//	      1 with DAVE on, see below), audio_codec, video_codec,
//	      media_session_id}, then op 11 listing
//	      everyone already in the channel and op 5 {user_id, ssrc, speaking}
//	      for each of them who has spoken (and for every member), so the
//	      client can map SSRCs to users. Forwarded RTP goes to data.address
//	      and data.port.
//	op 3  Heartbeat {t, seq_ack} → Heartbeat ACK (op 6) {t} (t echoed
//	      verbatim; a bare number d is echoed too). seq_ack trims the resume
//	      buffer. Nothing received for Options.HeartbeatTimeout (default
//	      2.5 × interval) → 4009 and the session ends.
//	op 5  Speaking {speaking, delay, ssrc}: ssrc must be the one from Ready
//	      (else 4020, Discord's "invalid SSRC"); relayed to the channel as
//	      {user_id, ssrc, speaking}.
//	op 7  Resume {server_id, session_id, token, seq_ack}: unknown session →
//	      4006; otherwise Resumed (op 9, d null), then every buffered message
//	      after seq_ack, in order, then live traffic. If a message after
//	      seq_ack is no longer buffered (Options.ResumeBuffer, default 1024
//	      per session) the resume fails with 4006 and the session ends. A
//	      still-open old socket of the session is cut.
//	op 23, 31  DAVE transition ready / invalid commit: passed to
//	      Options.OnJSON and, with DAVE on, handled (below).
//	binary [op u8][payload], ops 26 and 28: passed to Options.OnBinary
//	      and, with DAVE on, handled (below).
//	anything else: 4001 (unknown opcode); undecodable JSON or a payload
//	      missing a required field: 4002; any op but 0, 3, 7 before
//	      Identify: 4003.
//
// Sequence numbers: ops 4, 5, 11, 13, the DAVE ops 21, 22, 24 and every
// message sent with SendJSON carry a top-level "seq"; binary server frames are
// [seq u16 BE][op u8][payload] (SendBinary). JSON and binary share one
// counter that starts at 1 and wraps at 16 bits, as the docs' "fixed bit
// length sequence number". Hello, Ready, ACK and Resumed carry no seq and
// are not replayed.
//
// # UDP and the forwarding unit
//
// One socket serves every session. Per datagram:
//
//   - 74 bytes of type 1, length 70: IP discovery; answered with type 2, the
//     sender's address NUL-terminated at offset 8 and its port at 72.
//   - 8 bytes or fewer: keepalive (@discordjs/voice sends one every 5 s),
//     counted and ignored.
//   - RTCP (version 2, packet type 200–204): counted and ignored.
//   - RTP (version 2, payload type 120): the SSRC names the sender's
//     session; the packet is authenticated and decrypted with the sender's
//     key and mode. The rtpsize AAD is the fixed header, the CSRCs and the
//     extension preamble; the encrypted extension body and RTP padding are
//     stripped. The nonce is the trailing 32-bit counter (big-endian, at
//     the start of the 12- or 24-byte nonce).
//   - The Opus payload is re-encrypted for every other session in the same
//     guild and channel that has a key and an address, is not self-deafened
//     and has been told the sender's SSRC (op 5), each with its own key,
//     mode and nonce counter (starting at 1). The sender's RTP sequence
//     number, timestamp and SSRC are kept; the header is a plain 12 bytes.
//     Silence frames (F8 FF FE) are forwarded like any frame.
//   - RTP that arrives before the sender's first op 5 is forwarded and
//     counted as Unannounced: clients send op 5 and their first packet back
//     to back, so the packet may overtake the WebSocket message. Clients
//     that do not know the SSRC yet get none of it.
//
// Stats() and UserStats(userID) count what arrived: Packets, IPDiscovery,
// Keepalives, RTCP, RTP, DecryptFailures (bad tag, or no key yet),
// Malformed (not RTP, bad padding or extension length), UnknownSSRC,
// Unannounced (a subset of RTP), Forwarded, FaultDropped. Every datagram
// lands in exactly one of the classifying counters (fuzz-checked). An RTP
// packet is counted once its forwards are in Forwarded and FaultDropped, so
// a test that sees RTP reach n knows how many datagrams the receivers get
// for those n packets, and can wait for exactly that many.
//
// Heartbeats(guildID, userID) reports a session's heartbeats (op 3): how
// many arrived, the last seq_ack, and the last sequence number the session
// was sent.
//
// # Simulated members (scripting)
//
//	m, err := s.JoinMember(ctx, voicesim.MemberOptions{GuildID: g, ChannelID: c, UserID: u})
//	err = m.PlayPCM(ctx, pcm48kStereo) // or m.PlayOpus(ctx, frames)
//	err = m.WaitHeard(ctx, botUserID, 25)
//	frames, pcm := m.Heard(botUserID), m.HeardPCM(botUserID)
//	m.Leave()
//
// A member is a participant without a WebSocket: it has an SSRC, a
// transport key and its own loopback UDP socket, and it speaks real RTP
// to the server, so its audio goes through the same decrypt, faults and
// forwarding path as a client's. Joining announces it to the channel with
// op 11 and op 5 (speaking 0, the SSRC mapping). PlayOpus announces
// speaking 1, sends one frame per MemberOptions.FrameInterval (default 20
// ms, real time; tests may shorten it), sequence +1 and timestamp +960 per
// frame, then five silence frames and speaking 0. PlayPCM encodes 48 kHz
// interleaved stereo with libopus (the system libopus via audio/opus) first; EncodePCM is
// exported for tests that need the exact frames. What the forwarding unit
// sends a member is decrypted, attributed by SSRC, recorded per user
// (silence frames are counted in Stats but not recorded) and decoded to
// PCM with one Opus decoder per speaker. Leave announces op 13. If the main
// gateway revokes a member's session, the member stays open but its audio
// goes nowhere until Leave.
//
// # Faults
//
//   - CloseVoice(userID, code): closes the user's WebSockets with any code.
//     For resumable codes (below 4000, and 4015) the session survives and
//     the client may resume; for every other code the session and its token
//     end and the channel gets op 13.
//   - DropVoice(userID): cuts the TCP connection without a close frame (the
//     client sees 1006 and resumes); messages sent meanwhile are replayed.
//   - SetFaults(userID, ToServer|FromServer, Faults{LossPercent,
//     ReorderPercent, DuplicatePercent, GarbagePercent, Delay, Jitter,
//     Seed}): per-packet impairments of what the server receives from the
//     user or what the forwarding unit sends the user. Reorder holds a
//     packet until the next one passes; garbage injects a random datagram of
//     1–199 bytes before the packet; Delay holds every packet and Jitter
//     each a further random 0 to Jitter (held on the UDP loop; a packet
//     never overtakes the one ahead of it, unless the faults change while
//     packets are held). Decisions come from a PCG seeded with Seed, so a run is
//     reproducible for the same packet sequence. The zero Faults clears.
//   - Options.RequireDAVE: Identify without DAVE support gets 4017.
//
// # DAVE
//
// Off by default: every client gets dave_protocol_version 0, and the DAVE
// opcodes are only passed to Options.OnBinary / OnJSON (SendBinary and
// SendJSON deliver sequenced, resumable frames), so a test can play the
// server role itself. Options.DAVE (WithDAVE; RequireDAVE implies it)
// makes the server play it, per voice channel, as the DAVE whitepaper
// v1.1.4 §"Voice Gateway" describes, with discord/dave/extsender as the
// MLS external sender. The server never holds a media key: it has only
// the external sender's signing key, relays MLS messages and forwards
// DAVE frames like any Opus payload.
//
//   - Version. A call runs protocol 1 while everyone in it announced
//     max_dave_protocol_version >= 1 (members: unless
//     MemberOptions.NoDAVE), else 0. Op 4 tells a joiner the call's
//     version. A client without DAVE joining a protocol-1 call downgrades
//     it: op 21 {transition_id, protocol_version: 0} to the DAVE clients,
//     op 23 from each, op 22. When the last one leaves, the call is
//     re-created at 1: op 24 {epoch: 1, protocol_version: 1} and op 25 to
//     everyone, whose new key packages form a new group.
//   - Op 25 (external sender) follows op 4 for clients at protocol 1.
//   - Op 26: the key package must parse, verify and carry the sender's own
//     user id as its basic credential; otherwise it is counted (Malformed)
//     and dropped.
//   - Group creation: once two clients sent key packages, each gets op 27
//     Add proposals for the others. The first valid commit creates the
//     group: op 29 to its author, op 30 (Welcome) to the others. A sole
//     client waits in its pending group.
//   - In an established group, the connected members get op 27 with Adds
//     for new key packages and Removes for members who left or reported
//     op 31, all in one message; with nobody left to commit the group is
//     re-created (op 24 epoch 1).
//   - Op 28: the first commit of the epoch that extsender accepts (current
//     epoch, references only to outstanding proposals, Welcome iff Adds,
//     from the right leaf) is announced with a new transition id: op 29
//     to the members that process it, op 30 to the joiners; later or
//     invalid commits are counted and dropped. One proposal round or
//     transition runs at a time; changes meanwhile wait for it.
//   - Revokes: if an outstanding Add's client leaves or sends a newer key
//     package, or a would-be committer leaves, every outstanding proposal
//     is revoked (op 27 revoke with their ProposalRefs) and the round is
//     proposed afresh.
//   - Transitions: op 22 {transition_id} goes to the recipients that sent
//     op 23 once none still owes it; members who left or answered op 31
//     are not waited for.
//   - Options.DAVETimeout (default 5 s): a proposal round without a valid
//     commit is revoked and proposed again; a transition still missing
//     op 23s is executed for the recipients that are ready.
//   - Op 31 {transition_id}: the client could not process the commit or
//     Welcome; it resets and sends a new key package. Its stale leaf is
//     removed and it is re-added from that key package (one commit when
//     both are known).
//
// DAVE(guildID, channelID) returns the channel's DAVEState {Version,
// Epoch, Established, Members, Busy, Stats}; DAVEStats counts key
// packages, proposals, revokes, accepted and rejected commits,
// transitions, op 31 reports, malformed input, downgrades, upgrades,
// re-creations and timeouts. CorruptNextWelcome(guild, channel, user) is
// a fault: the user's next Welcome has a byte of its encrypted GroupInfo
// flipped, so the client answers op 31.
//
// With DAVE on, simulated members are real DAVE participants: each owns a
// discord/dave Session that the server hands ops 4, 11, 13 and 21-30
// directly (members have no WebSocket), whose answers it processes like a
// client's. PlayOpus encrypts every frame with it (frames before the
// member's first transition are dropped and counted as DAVENotReady) and
// what a member receives is decrypted with it before it is recorded, so
// Heard and HeardPCM are the end-to-end plaintext (failures:
// DAVEDecryptFailures). Member.DAVE() exposes the session for its epoch,
// epoch authenticator and roster. MemberOptions.NoDAVE makes a member
// without DAVE support, which downgrades the call. DAVE needs numeric
// (snowflake) user and channel ids.
//
// The DAVE role runs under the server's lock, MLS work of in-process
// members included (a few milliseconds per commit), so forwarding may
// jitter by that much during a transition.
//
// # Not simulated
//
// Video and its opcodes (12, 15, 18, ...), the deprecated xsalsa20 and
// non-rtpsize modes (Discord stopped accepting them), RTCP processing and
// sending, voice regions and server moves beyond 4014, automatic rate
// limiting (4021 only through CloseVoice), a session expiry for clients
// that vanish without leaving, and the "must send op 5 or be disconnected"
// rule (RTP before op 5 is counted, not punished). DAVE: no close codes
// for DAVE protocol violations (they are counted and dropped), no
// disconnection of a client that misses a transition (it is left out of
// it), and no verification of the frames' DAVE format by the forwarding
// unit.
//
// # Performance
//
// BenchmarkForward (AMD EPYC, 2 cores, shared machine): forwarding one
// packet to one receiver takes about 7.2 µs against 0.35 µs for the same
// cryptography alone measured in the same run (three receivers: 24.9 µs
// vs 1.0 µs); the loopback UDP write dominates. The path allocates
// nothing per packet (TestForwardAllocs). A channel of ten speakers costs
// well under 1% of a core.
//
// # Fidelity
//
// TestDiscordJSVoiceInterop runs an unmodified @discordjs/voice 0.19.2
// (interop/voice/client.mjs, with a minimal gateway adapter and
// NODE_EXTRA_CA_CERTS) against the server: it reaches Ready, receives a
// member's Opus byte-exact, plays a 440 Hz tone the member decodes,
// heartbeats with seq_ack, resumes (op 7 → op 9) after DropVoice with its
// SSRC and key intact, and goes to Disconnected without resuming when
// Revoke closes it with 4014. It runs once per transport mode, the server
// offering only that mode (djs encrypts XChaCha20 with @noble/ciphers,
// pinned in interop/package.json).
//
// TestDiscordJSVoiceDAVEInterop runs the same unmodified client, which
// does DAVE with @snazzah/davey 0.1.12, with the DAVE role on: it forms a
// group with a simulated member (a banter dave.Session), receives the
// member's DAVE-encrypted Opus byte-exact and plays a tone the member
// decrypts and decodes; a second member joins (djs processes an Add
// commit) and leaves (a Remove commit); the epoch authenticators of djs
// and the members are equal after every transition; a member without
// DAVE downgrades the call (djs sends and receives plain Opus) and its
// leaving re-creates the group at protocol 1. A second run
// corrupts djs's first Welcome: djs answers op 31 and re-initializes, the
// server removes and re-adds it, and the call goes on as before.
//
// TestDAVECall does the same with banter's own client (discord/voice with a
// dave.Session through voiceadapter): group creation, audio both ways,
// a member joining and leaving, op 31 recovery from a corrupted Welcome,
// a downgrade to protocol 0 by a member without DAVE and the upgrade when
// it leaves. TestDAVERevokeAndStaleCommit drives a client over the raw
// wire to check revokes and the refusal of a commit to revoked proposals;
// TestDAVETimeouts checks both timeouts.
// FuzzDAVEInput and FuzzDAVEKeyPackage fuzz what clients send the role.
//
// The interop tests run in go test whenever node is installed (npm ci in
// interop/ is run if node_modules is missing) and skip with a reason
// otherwise.
package voicesim
