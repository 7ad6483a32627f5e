// Package text is banter in text channels, end to end: from a MESSAGE_CREATE to a reply in
// character.
//
//	gateway event ─▶ ingest (filter, store, addressing signals) ─▶ Stage A (enqueue)
//	  ─▶ per-channel queue (coalesce a burst, bounded, shed unaddressed first)
//	  ─▶ Stage A again (the room may have moved on) ─▶ rate limit (hourly cap with a reserve
//	     for addressed turns) ─▶ context (reply chain / cluster / anchor, participants)
//	  ─▶ model (send_discord_message tool or [SKIP]) ─▶ Stage B ─▶ dispatch (target check,
//	     routing, 2000-char split, allowed_mentions, ban words) ─▶ Discord REST
//
// The pipeline talks to Discord through discordgo (the gateway events it is handed and the REST
// calls of the Discord interface) and to the model through the llm package. Tests run it
// against the Discord and OpenAI simulators in sim/.
package text
