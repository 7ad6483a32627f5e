// Package discordsim is a local Discord: REST (API v9 and v10 paths, JSON
// and multipart uploads), the gateway (v9/v10 JSON, payload compression and
// zlib-stream), voice signalling on the main gateway, a CDN serving uploads
// at signed URLs, fault and latency injection, and a scripting API.
//
// It exists so that banter's production code (discordgo v0.29.0) and
// unmodified third-party clients (discord.js 14) can be run against
// something that speaks Discord's real wire protocols on loopback. What the
// clients send and require is recorded in the project's reference notes
// (discord-clients.md); the §4 checklist there is this package's acceptance
// list, and docs/simulator.md describes what is simulated and what is not.
//
// The state and Discord's rules live in package world (sim/discord/world),
// which does no I/O; this package's transports are thin adapters over it
// (REST decodes, calls the world, renders; the gateway turns the world's
// change events into dispatches), and Server embeds the world, so its
// methods are the scripting API too. See "Layers" in docs/simulator.md.
//
// A test starts a simulator with simtest.Serve (package sim/discord/simtest,
// kept apart so the production binary does not link testing), which listens
// on 127.0.0.1, checks every request against Discord's API spec and closes
// it with t.Cleanup; simtest also holds the waits:
//
//	sim := simtest.Serve(t)
//	g := sim.CreateGuild("Sim Guild")
//	general := sim.CreateTextChannel(g, "general")
//	alice := sim.CreateUser("alice")
//	_ = sim.AddMember(g, alice)
//	// point the bot at sim.APIBaseURL() with token sim.Token()
//	q, _ := sim.Post(ctx, alice, general, "hello "+discordsim.MentionUser(sim.BotID()))
//	reply, err := simtest.WaitMessage(ctx, sim, func(m discordsim.Message) bool {
//		return m.Author == sim.BotID() && m.ReplyTo() == q.ID
//	})
//
// Performance (2-core box, one run, medians of 3): encoding one
// MESSAGE_CREATE dispatch costs 4.2 µs (BenchmarkEncodeMessage, the
// baseline); a scripted Post with no session connected 4.6 µs (1.1×) and
// with one connected session, its frame written to loopback and read by
// the client, 10.7 µs (2.6×) (BenchmarkPost). The simulator is not a
// bottleneck for the bot's tests.
//
// Everything is concurrency safe. Waits (Await, and simtest's) take a
// context and never sleep. Close stops and waits for every goroutine the
// server started.
//
// The voice server (voice gateway v8, UDP, DAVE external sender) lives in
// the sibling package voicesim; this package only does the main-gateway
// signalling (op 4 → VOICE_STATE_UPDATE then VOICE_SERVER_UPDATE) and
// tells a VoiceBackend whom to admit.
package discordsim
