// Package text is banter in text channels, end to end: from a MESSAGE_CREATE to a reply in
// character.
//
//	ingest   (filter, store, addressing signals, the message replied to)
//	  ─▶ admit (Stage A at enqueue, prompt budget, per-channel queue: coalesce a burst,
//	     bounded, shed unaddressed first; the channel's history backfilled once; Stage A again)
//	  ─▶ context (reply chain / cluster / anchor, participants, images)
//	  ─▶ generate (the reply model with the send_discord_message tool, or [SKIP]; lookups it
//	     asked for, then the follow-up pass; Stage B)
//	  ─▶ dispatch (target check, routing, 2000-char split, allowed_mentions, ban words) ─▶ REST
//
// pipeline.go shows the stages after the queue in order (answer); a turn carries what they
// need, read once. The pipeline talks to Discord through discordgo (the gateway events it is
// handed and the REST calls of the Discord interface) and to the model through the llm
// package, which knows nothing of Discord: the send_discord_message tool (its schema and the
// parsing of its arguments) is this package's. Tests run it against the Discord and OpenAI
// simulators in sim/.
package text
