package discordsim

import (
	"encoding/json"
	"testing"

	"github.com/banterbot/banter/sim/discord/world"
)

// FuzzParseUpload feeds untrusted multipart message bodies (payload_json,
// files[n]) through parsing and the attachment metadata: no panics, and
// every file returned is one that was uploaded.
func FuzzParseUpload(f *testing.F) {
	const ct = "multipart/form-data; boundary=XyZ"
	for _, seed := range []string{
		"--XyZ\r\nContent-Disposition: form-data; name=\"payload_json\"\r\nContent-Type: application/json\r\n\r\n{\"content\":\"hi\",\"attachments\":[{\"id\":0,\"filename\":\"b.png\"}]}\r\n--XyZ\r\nContent-Disposition: form-data; name=\"files[0]\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n--XyZ--\r\n",
		"--XyZ\r\nContent-Disposition: form-data; name=\"content\"\r\n\r\nplain\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\nzz\r\n--XyZ--\r\n",
		"--XyZ\r\nContent-Disposition: form-data; name=\"files[99]\"; filename=\"../../etc/passwd\"\r\n\r\nx\r\n--XyZ--\r\n",
		"not multipart at all",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		up, err := parseUpload(ct, body)
		if err != nil {
			return
		}
		var b createMessageBody
		if len(up.payload) > 0 && json.Unmarshal(up.payload, &b) != nil {
			return
		}
		files, err := up.withMetadata(b.Attachments)
		if err != nil {
			return
		}
		if len(files) != len(up.files) {
			t.Fatalf("%d files from %d parts", len(files), len(up.files))
		}
	})
}

// FuzzParseEmoji: any path segment parses to an emoji or Unknown Emoji,
// and an emoji renders back to what names it.
func FuzzParseEmoji(f *testing.F) {
	for _, seed := range []string{"👍", "🇫🇷", "1️⃣", "❤️", "thumbsup", "party:123", ":", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := world.ParseEmoji(s)
		if err != nil {
			if err != world.ErrUnknownEmoji {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if e.String() != s {
			t.Fatalf("%q parsed to %+v", s, e)
		}
	})
}
