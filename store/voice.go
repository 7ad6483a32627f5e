package store

import "strings"

// Voice transcripts are stored as messages (docs/memory.md): what a member said in a voice
// channel, kept only where memory is on, as the source of the facts extracted from it. They
// live under a channel id of their own (VoiceChannelID), apart from the voice channel's text
// chat, so that the text pipeline's history of that chat never shows them as typed lines.

// voicePrefix marks the channel id of a voice channel's transcripts.
const voicePrefix = "voice:"

// VoiceChannelID is the channel id the transcripts of voice channel channelID are stored under.
func VoiceChannelID(channelID string) string { return voicePrefix + channelID }

// VoiceChannelOf reports whether a stored message's channel id is a voice channel's
// transcripts, and which voice channel.
func VoiceChannelOf(storedChannelID string) (channelID string, ok bool) {
	return strings.CutPrefix(storedChannelID, voicePrefix)
}
