package post

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeAnswer: Discord's answer to a message create is read by
// decodeAnswer. Whatever the answer's bytes, it never panics, and it
// returns either a message with the answer's id (the full object, or the
// id, channel and the content sent when discordgo cannot read the rest) or
// an error when the answer has no id.
func FuzzDecodeAnswer(f *testing.F) {
	for _, s := range []string{
		`{"id":"1100000000000000100","channel_id":"1100000000000000003","content":"hi","author":{"id":"1","username":"b","bot":true},"timestamp":"2026-11-24T10:00:00.000000+00:00","type":0,"nonce":"abc","mentions":[],"embeds":[],"attachments":[]}`,
		`{"id":"1100000000000000101","timestamp":"not a time"}`,
		`{"id":"1100000000000000102","components":[{"type":99}]}`,
		`{"id":"1100000000000000103","channel_id":7}`,
		`{"id":1100000000000000104}`,
		`{"id":""}`,
		`{}`,
		`[]`,
		`null`,
		`"1100000000000000105"`,
		`{"id":"1","embeds":[{"fields":[{"name":"a","value":"b","inline":"yes"}]}]}`,
		`{"id":"1","referenced_message":{"id":"2","referenced_message":{"id":"3"}}}`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := decodeAnswer(raw, "1100000000000000003", "what was sent")
		var want struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(raw, &want) // a field of the wrong type elsewhere still lets id be read
		hasID := want.ID != ""
		switch {
		case err != nil && hasID:
			t.Fatalf("answer %q has id %q, but: %v", raw, want.ID, err)
		case err != nil:
			return
		case m == nil || m.ID == "" || m.ChannelID == "":
			t.Fatalf("answer %q: message %+v without id or channel", raw, m)
		case !hasID:
			t.Fatalf("answer %q without an id read as message %q", raw, m.ID)
		}
	})
}
