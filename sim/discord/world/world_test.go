package world

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/png"
	"sync"
	"testing"
)

// TestObserversSeeCommitOrder: with many writers at once, observers are
// told of every change in the order the changes were made (message ids
// increase), which is what keeps gateway dispatches in order.
func TestObserversSeeCommitOrder(t *testing.T) {
	w := New(Config{})
	g := w.CreateGuild("g")
	ch, err := w.CreateChannel(g, ChannelText, "c")
	if err != nil {
		t.Fatal(err)
	}
	var seen []MessageID
	w.Observe(func(v *View, e Event) {
		if mc, ok := e.(MessageCreated); ok {
			if _, live := v.Message(mc.Message.ID); !live {
				t.Errorf("observer does not see message %s in the world", mc.Message.ID)
			}
			seen = append(seen, mc.Message.ID) // the world's lock serializes observers
		}
	})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if _, err := w.CreateMessage(NewMessage{Channel: ch, Author: w.BotID(), Content: "x", Origin: OriginREST}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) != 400 {
		t.Fatalf("%d events, want 400", len(seen))
	}
	for i := 1; i < len(seen); i++ {
		if !SnowflakeLess(string(seen[i-1]), string(seen[i])) {
			t.Fatalf("event %d (%s) after %s: out of commit order", i, seen[i], seen[i-1])
		}
	}
}

func TestParseEmoji(t *testing.T) {
	for _, tt := range []struct {
		in string
		ok bool
	}{
		{"👍", true}, {"❤️", true}, {"🇫🇷", true}, {"1️⃣", true}, {"👨\u200d👩\u200d👧", true},
		{"thumbsup", false}, {":thumbsup:", false}, {"party:123456", false}, {"", false}, {"é", false}, {"a👍", false},
	} {
		e, err := ParseEmoji(tt.in)
		if (err == nil) != tt.ok || (tt.ok && e.Name != tt.in) {
			t.Errorf("ParseEmoji(%q) = %+v, %v; want ok=%v", tt.in, e, err, tt.ok)
		}
	}
}

func TestImageSize(t *testing.T) {
	var p bytes.Buffer
	_ = png.Encode(&p, image.NewGray(image.Rect(0, 0, 7, 5)))
	vp8x := append([]byte("RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00"), 0x3f, 0x01, 0x00, 0xef, 0x00, 0x00)
	vp8l := []byte("RIFF\x00\x00\x00\x00WEBPVP8L\x00\x00\x00\x00\x2f")
	vp8l = binary.LittleEndian.AppendUint32(vp8l, uint32(99)|uint32(49)<<14)
	vp8l = append(vp8l, make([]byte, 8)...)
	vp8 := []byte("RIFF\x00\x00\x00\x00WEBPVP8 \x00\x00\x00\x00\x00\x00\x00\x9d\x01\x2a")
	vp8 = binary.LittleEndian.AppendUint16(vp8, 640)
	vp8 = binary.LittleEndian.AppendUint16(vp8, 480)
	for _, tt := range []struct {
		name string
		data []byte
		w, h int
	}{
		{"png", p.Bytes(), 7, 5},
		{"webp extended", vp8x, 320, 240},
		{"webp lossless", vp8l, 100, 50},
		{"webp lossy", vp8, 640, 480},
		{"not an image", []byte("hello"), 0, 0},
	} {
		if w, h := imageSize(tt.data); w != tt.w || h != tt.h {
			t.Errorf("%s: %dx%d, want %dx%d", tt.name, w, h, tt.w, tt.h)
		}
	}
}
