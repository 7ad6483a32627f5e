// Package voice is banter's Discord voice connection: the voice gateway v8
// WebSocket, the UDP media socket with rtpsize AEAD transport encryption, the
// per-speaker receive streams and the paced sender, plus a Manager that joins,
// moves and leaves voice channels through discordgo's main gateway.
//
// The codecs live in subpackages with no I/O: rtp (RTP header), transport
// (AEAD modes, IP discovery, keepalive), gateway (voice WS payloads, close
// codes) and pace (the 20 ms frame pacer). DAVE end-to-end encryption is
// plugged in through the E2EE interface (implemented by discord/dave).
//
// Spec: https://discord.com/developers/docs/topics/voice-connections and
// ../shared/reference/dave-notes.md §1–2.
//
// Performance: BenchmarkReceivePath (RTCP filter, header parse, SSRC lookup,
// transport decrypt, sequence tracking, hand-off; AMD EPYC, 2 cores) costs
// about 250 ns per packet with aead_aes256_gcm_rtpsize and 420 ns with
// aead_xchacha20_poly1305_rtpsize, 0 allocations, against 1.3–1.8 µs and 5
// allocations for a naive allocating port in the same run; figures and the
// pacing measurements are in docs/voice-transport.md.
package voice
