package text_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"net/http"
	"net/http/httptest"
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

// imageEmbed is a posted image link as Discord embeds it, with its proxy copy at proxy.
func imageEmbed(url, proxy string) discordsim.PostOption {
	b, _ := json.Marshal(map[string]any{"type": "image", "url": url,
		"thumbnail": map[string]any{"url": url, "proxy_url": proxy, "width": 4, "height": 4}})
	return discordsim.WithEmbed(b)
}

// TestImageQuestionByURL: a question about an attached image reaches the model as an image
// input (images.mode url: Discord's URL, which the provider fetches), the line saying whose
// image it is, and the answer is sent.
func TestImageQuestionByURL(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Images.Mode = "url" },
		toolReply("think of this", "reply", "", "That cat has opinions."))
	q := h.post(h.alice, "banter, what do you think of this?", discordsim.WithAttachment("cat.png", "image/png", 48213))
	r := h.waitBot(1)
	if r.Content != "That cat has opinions." || r.ReplyTo() != q.ID {
		t.Fatalf("reply %q to %q", r.Content, r.ReplyTo())
	}
	g := last(t, h.generations())
	if len(g.Images) != 1 || g.Images[0] != q.Attachments[0].URL {
		t.Fatalf("image inputs = %v, want the attachment's URL %s", g.Images, q.Attachments[0].URL)
	}
	if !strings.Contains(g.Prompt, "what do you think of this? [image 1: cat.png]") ||
		!strings.Contains(g.Prompt, "1. alice's attachment cat.png, in msg "+string(q.ID)) {
		t.Errorf("prompt does not say whose image it is:\n%s", g.Prompt)
	}
	if n := h.metric("banter_text_images_total", map[string]string{"result": "url"}); n != 1 {
		t.Errorf("images_total{url} = %v, want 1", n)
	}
}

// TestImagesInline: images.mode inline fetches each image (from an allowed host only) and sends
// its bytes; one that cannot be had (gone, animated, too many) is noted in its line and never
// stops the reply. The images of the trigger come first, then the newest of the history.
func TestImagesInline(t *testing.T) {
	pngData, anim := pngBytes(t), animatedGIF(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/cdn/cat.png", func(w http.ResponseWriter, r *http.Request) { w.Write(pngData) })
	mux.HandleFunc("/cdn/dance.gif", func(w http.ResponseWriter, r *http.Request) { w.Write(anim) })
	mux.HandleFunc("/cdn/gone.png", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	cdn := httptest.NewServer(mux) // stands in for Discord's media proxy, allowed by images.extraHosts
	t.Cleanup(cdn.Close)
	host := strings.TrimPrefix(cdn.URL, "http://")
	h := newHarness(t, func(c *config.Config) {
		c.Images.ExtraHosts = []string{host}
		c.Images.MaxPerTurn = 4
	}, toolReply("these", "reply", "", "Nice collection."))
	h.post(h.bob, "old one", imageEmbed("https://example.com/old.png", cdn.URL+"/cdn/cat.png"))
	h.post(h.bob, "dancing", imageEmbed("https://example.com/dance.gif", cdn.URL+"/cdn/dance.gif"))
	h.post(h.bob, "this one's gone", imageEmbed("https://example.com/gone.png", cdn.URL+"/cdn/gone.png"))
	h.post(h.bob, "elsewhere", imageEmbed("https://example.com/x.png", "https://images.example.org/x.png"))
	q := h.post(h.alice, "banter, thoughts on these?", imageEmbed("https://example.com/cat.png", cdn.URL+"/cdn/cat.png"))
	if r := h.waitBot(1); r.ReplyTo() != q.ID {
		t.Fatalf("reply to %q", r.ReplyTo())
	}
	g := last(t, h.generations())
	want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngData)
	if len(g.Images) != 1 || g.Images[0] != want {
		t.Fatalf("image inputs = %d (%.40v), want the trigger's png inline", len(g.Images), g.Images)
	}
	for _, line := range []string{"thoughts on these? [image 1: cat.png]", "dancing [image unavailable]",
		"this one's gone [image unavailable]", "elsewhere [image unavailable]", "old one [image not shown: cat.png]"} {
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
	m, err := h.dsim.Post(h.ctx, h.bob, vc, "look at this view", discordsim.WithAttachment("view.jpg", "image/jpeg", 2000))
	if err != nil {
		t.Fatal(err)
	}
	h.waitStored(m.ID, "saved", func(store.Message) bool { return true })
	img, caption, ok := h.svc.ChatImage(h.ctx, string(vc))
	if !ok || img.URL != m.Attachments[0].URL || !strings.Contains(caption, "bob posted this image (view.jpg)") {
		t.Fatalf("ChatImage = %+v, %q, %v; want bob's view.jpg", img, caption, ok)
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
	m := h.post(h.bob, "https://example.com/meme.png", discordsim.WithAttachment("notes.png", "image/png", 10))
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
