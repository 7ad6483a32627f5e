package text_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/store"
)

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	img := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, color.White})
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func animatedGIF(t *testing.T) []byte {
	t.Helper()
	frame := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, color.White})
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, &gif.GIF{Image: []*image.Paletted{frame, frame}, Delay: []int{10, 10}}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withoutQuery is a URL without its query (a signed CDN URL is signed anew at every render).
func withoutQuery(u string) string {
	u, _, _ = strings.Cut(u, "?")
	return u
}

// imageEmbed is a posted image link as Discord embeds it, with its proxy copy at proxy.
func imageEmbed(url, proxy string) discordsim.PostOption {
	b, _ := json.Marshal(map[string]any{"type": "image", "url": url,
		"thumbnail": map[string]any{"url": url, "proxy_url": proxy, "width": 4, "height": 4}})
	return discordsim.WithEmbed(b)
}

// TestImageQuestion: a question about an uploaded image reaches the model as an image input,
// the line saying whose image it is, and the answer is sent: inline (the default: fetched from
// the simulator's CDN, a signed URL, and sent as bytes), and by URL (images.mode url).
func TestImageQuestion(t *testing.T) {
	pngData := pngBytes(t)
	h := newHarness(t, nil, toolReply("think of this", "reply", "", "That cat has opinions."))
	q := h.post(h.alice, "banter, what do you think of this?", discordsim.WithFile("cat.png", "image/png", pngData))
	r := h.waitBot(1)
	if r.Content != "That cat has opinions." || r.ReplyTo() != q.ID {
		t.Fatalf("reply %q to %q", r.Content, r.ReplyTo())
	}
	g := last(t, h.generations())
	if want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngData); len(g.Images) != 1 || g.Images[0] != want {
		t.Fatalf("image inputs = %.60v, want the uploaded png inline", g.Images)
	}
	if n := h.metric("banter_text_images_total", map[string]string{"result": "inline"}); n != 1 {
		t.Errorf("images_total{inline} = %v, want 1", n)
	}
	if !strings.Contains(g.Prompt, "what do you think of this? [image 1: cat.png]") ||
		!strings.Contains(g.Prompt, "1. alice's attachment cat.png, in msg "+string(q.ID)) {
		t.Errorf("prompt does not say whose image it is:\n%s", g.Prompt)
	}

	h.reconfigure(func(c *config.Config) { c.Images.Mode = "url" })
	q = h.post(h.alice, "banter, and what do you think of this one?", discordsim.WithFile("cat.png", "image/png", pngData))
	if r := h.waitBot(2); r.ReplyTo() != q.ID {
		t.Fatalf("reply to %q", r.ReplyTo())
	}
	g = last(t, h.generations())
	if len(g.Images) != 1 || withoutQuery(g.Images[0]) != withoutQuery(h.dsim.AttachmentURL(h.general, q.Attachments[0])) || !strings.Contains(g.Images[0], "&hm=") {
		t.Fatalf("image inputs = %.60v, want the new image's signed CDN URL %s (the earlier one, answered, not again)", g.Images, h.dsim.AttachmentURL(h.general, q.Attachments[0]))
	}
	if !strings.Contains(g.Prompt, "this one? [image 1: cat.png]") || !strings.Contains(g.Prompt, "1. alice's attachment cat.png, in msg "+string(q.ID)) {
		t.Errorf("prompt does not number the new image 1:\n%s", g.Prompt)
	}
	if n := h.metric("banter_text_images_total", map[string]string{"result": "url"}); n != 1 {
		t.Errorf("images_total{url} = %v, want 1 (the new image of the second prompt)", n)
	}
}

// TestImagesInline: images.mode inline fetches each image (from an allowed host only) and sends
// its bytes; one that cannot be had (too large, animated, on another host, too many) is noted in
// its line and never stops the reply. The images of the trigger come first, then the newest of
// the history.
func TestImagesInline(t *testing.T) {
	pngData := pngBytes(t)
	h := newHarness(t, func(c *config.Config) {
		c.Images.MaxPerTurn = 4
		c.Images.MaxBytes = 4096
	}, toolReply("these", "reply", "", "Nice collection."))
	h.post(h.bob, "old one", discordsim.WithFile("cat.png", "image/png", pngData))
	h.post(h.bob, "dancing", discordsim.WithFile("dance.gif", "image/gif", animatedGIF(t)))
	h.post(h.bob, "this one's huge", discordsim.WithFile("huge.png", "image/png", append(append([]byte{}, pngData...), make([]byte, 8192)...)))
	h.post(h.bob, "elsewhere", imageEmbed("https://example.com/x.png", "https://images.example.org/x.png"))
	q := h.post(h.alice, "banter, thoughts on these?", discordsim.WithFile("cat.png", "image/png", pngData))
	if r := h.waitBot(1); r.ReplyTo() != q.ID {
		t.Fatalf("reply to %q", r.ReplyTo())
	}
	g := last(t, h.generations())
	want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngData)
	if len(g.Images) != 1 || g.Images[0] != want {
		t.Fatalf("image inputs = %d (%.40v), want the trigger's png inline", len(g.Images), g.Images)
	}
	for _, line := range []string{"thoughts on these? [image 1: cat.png]", "dancing [image unavailable]",
		"this one's huge [image unavailable]", "elsewhere [image unavailable]", "old one [image not shown: cat.png]"} {
		if !strings.Contains(g.Prompt, line) {
			t.Errorf("prompt lacks %q:\n%s", line, g.Prompt)
		}
	}
	if n := h.metric("banter_text_images_total", map[string]string{"result": "unavailable"}); n != 3 {
		t.Errorf("images_total{unavailable} = %v, want 3 (the cap leaves the oldest unfetched)", n)
	}
}

// TestChatImageForVoice: a voice turn may be shown the last image posted in the voice
// channel's text chat within images.voiceChatMinutes, captioned with who posted it; older
// images, or the setting at 0, give none.
func TestChatImageForVoice(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Images.Mode = "url"
		c.Images.VoiceChatMinutes = 10
	})
	vc := h.dsim.CreateVoiceChannel(h.guild, "lounge")
	m, err := h.dsim.Post(h.ctx, h.bob, vc, "look at this view", discordsim.WithFile("view.png", "image/png", pngBytes(t)))
	if err != nil {
		t.Fatal(err)
	}
	h.waitStored(m.ID, "saved", func(store.Message) bool { return true })
	img, caption, ok := h.svc.ChatImage(h.ctx, string(vc))
	if !ok || withoutQuery(img.URL) != withoutQuery(h.dsim.AttachmentURL(vc, m.Attachments[0])) || !strings.Contains(caption, "bob posted this image (view.png)") {
		t.Fatalf("ChatImage = %+v, %q, %v; want bob's view.png", img, caption, ok)
	}
	h.reconfigure(func(c *config.Config) { c.Images.VoiceChatMinutes = 0 })
	if _, _, ok := h.svc.ChatImage(h.ctx, string(vc)); ok {
		t.Error("ChatImage offered an image with images.voiceChatMinutes 0")
	}
	h.reconfigure(func(c *config.Config) { c.Images.VoiceChatMinutes = 10 })
	h.clock.Advance(11 * time.Minute)
	if _, _, ok := h.svc.ChatImage(h.ctx, string(vc)); ok {
		t.Error("an image older than images.voiceChatMinutes was offered")
	}
}

// TestImageEmbedFromUpdate: Discord adds a link's image embed in a MESSAGE_UPDATE after the
// create; the stored message takes it (keeping its attachments), and it is shown.
func TestImageEmbedFromUpdate(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Images.Mode = "url"
		c.Context.ClusterLookback = 1 // the store holds enough: no REST backfill (the simulator never saw the embed)
	}, toolReply("that meme", "reply", "", "Classic."))
	m := h.post(h.bob, "https://example.com/meme.png", discordsim.WithFile("notes.png", "image/png", pngBytes(t)))
	h.waitStored(m.ID, "saved", func(store.Message) bool { return true })
	proxy := "https://images-ext-1.discordapp.net/external/abc/https/example.com/meme.png"
	h.svc.HandleMessageUpdate(&discordgo.Message{ID: string(m.ID), ChannelID: string(h.general), Embeds: []*discordgo.MessageEmbed{{
		Type: discordgo.EmbedTypeImage, URL: "https://example.com/meme.png",
		Thumbnail: &discordgo.MessageEmbedThumbnail{URL: "https://example.com/meme.png", ProxyURL: proxy}}}})
	got := h.waitStored(m.ID, "with its embed", func(s store.Message) bool { return len(s.Images) == 2 })
	if got.Images[0].Filename != "notes.png" || got.Images[1].ProxyURL != proxy {
		t.Fatalf("images = %+v, want the attachment kept and the embed added", got.Images)
	}
	h.post(h.alice, "banter, what about that meme?")
	h.waitBot(1)
	g := last(t, h.generations())
	if len(g.Images) != 2 || g.Images[1] != proxy {
		t.Errorf("image inputs = %v; want the attachment and the embed's media-proxy copy (not example.com)", g.Images)
	}
}

// TestExpiredImageURLIsRefreshed: Discord's signed URLs expire (ex); an image whose stored URL
// has expired is fetched with a fresh one, from its message fetched again over REST.
func TestExpiredImageURLIsRefreshed(t *testing.T) {
	pngData := pngBytes(t)
	h := newHarness(t, nil, toolReply("remember this", "reply", "", "Still a great cat."))
	old := h.post(h.bob, "my cat", discordsim.WithFile("cat.png", "image/png", pngData))
	stored := h.waitStored(old.ID, "saved", func(store.Message) bool { return true })
	if len(stored.Images) != 1 || !strings.Contains(stored.Images[0].URL, "ex=") {
		t.Fatalf("stored images = %+v, want one signed URL", stored.Images)
	}
	h.clock.Advance(discordsim.URLLifetime + time.Hour)
	q := h.post(h.alice, "banter, remember this?", discordsim.ReplyTo(old.ID))
	if r := h.waitBot(1); r.ReplyTo() != q.ID {
		t.Fatalf("reply to %q", r.ReplyTo())
	}
	g := last(t, h.generations())
	if want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngData); len(g.Images) != 1 || g.Images[0] != want {
		t.Fatalf("image inputs = %.60v, want the old png fetched inline", g.Images)
	}
	if n := h.metric("banter_text_images_total", map[string]string{"result": "refreshed"}); n != 1 {
		t.Errorf("images_total{refreshed} = %v, want 1", n)
	}
	if m := h.waitStored(old.ID, "refreshed", func(m store.Message) bool { return m.Images[0].URL != stored.Images[0].URL }); !strings.Contains(m.Images[0].URL, "ex=") {
		t.Errorf("refreshed URL %q is not signed", m.Images[0].URL)
	}
}

// TestImageSentUntilAnswered bounds the bill of an image: it is sent with the requests of the
// turns up to the bot's next message in the channel, and after that only labelled in its line
// (not attached again with every later turn while it stays in the conversation), unless a
// trigger shows it or replies to its message. Six turns after one image: one image part in
// all, where every request carried it before. An image posted since the bot's last reply is
// sent; a reply to the earlier image's message sends that one again.
func TestImageSentUntilAnswered(t *testing.T) {
	pngData := pngBytes(t)
	h := newHarness(t, nil, toolReply("", "reply", "", "Nice."))
	pic := h.post(h.bob, "banter, look at my cat", discordsim.WithFile("red.png", "image/png", pngData))
	h.waitBot(1)
	for i := 2; i <= 6; i++ {
		h.post(h.alice, fmt.Sprintf("banter, question %d?", i))
		h.waitBot(i)
	}
	gens := h.generations()
	if len(gens) != 6 {
		t.Fatalf("%d generations, want 6", len(gens))
	}
	parts := 0
	for _, g := range gens {
		parts += len(g.Images)
	}
	if len(gens[0].Images) != 1 || parts != 1 {
		t.Errorf("image parts per request: first %d, all %d; want 1 and 1 (sent once, then labelled)", len(gens[0].Images), parts)
	}
	if p := gens[5].Prompt; !strings.Contains(p, "look at my cat [earlier image, not attached again: red.png]") ||
		!strings.Contains(p, `An "earlier image" was posted before your last message here`) {
		t.Errorf("the last prompt does not label the earlier image:\n%s", p)
	}

	h.post(h.bob, "and my dog", discordsim.WithFile("blue.png", "image/png", pngData)) // newer than the bot's last reply
	h.post(h.alice, "banter, cute?")
	h.waitBot(7)
	if g := last(t, h.generations()); len(g.Images) != 1 || !strings.Contains(g.Prompt, "and my dog [image 1: blue.png]") ||
		!strings.Contains(g.Prompt, "[earlier image, not attached again: red.png]") {
		t.Errorf("an image posted since the bot's last reply: %d image parts, want 1 (it), the earlier one labelled:\n%s", len(g.Images), g.Prompt)
	}

	h.post(h.alice, "banter, what colour was it again?", discordsim.ReplyTo(pic.ID))
	h.waitBot(8)
	if g := last(t, h.generations()); len(g.Images) != 1 || !strings.Contains(g.Prompt, "look at my cat [image 1: red.png]") {
		t.Errorf("a reply to the image's message: %d image parts, want 1 numbered in its line:\n%s", len(g.Images), g.Prompt)
	}
}
