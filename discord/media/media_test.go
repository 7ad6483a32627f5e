package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
)

// A message as Discord sends it (MESSAGE_CREATE d), with two attachments and three embeds.
const messageJSON = `{"id":"900","channel_id":"1","content":"what do you think of this? https://example.com/x.png",
 "attachments":[
  {"id":"11","filename":"cat.PNG","size":48213,"url":"https://cdn.discordapp.com/attachments/1/11/cat.PNG?ex=6750&is=674e&hm=ab","proxy_url":"https://media.discordapp.net/attachments/1/11/cat.PNG?ex=6750&is=674e&hm=ab","content_type":"image/png","width":640,"height":480},
  {"id":"12","filename":"notes.pdf","size":1000,"url":"https://cdn.discordapp.com/attachments/1/12/notes.pdf","proxy_url":"https://media.discordapp.net/attachments/1/12/notes.pdf","content_type":"application/pdf"},
  {"id":"13","filename":"huge.jpg","size":99999999,"url":"https://cdn.discordapp.com/attachments/1/13/huge.jpg","content_type":"image/jpeg"}],
 "embeds":[
  {"type":"image","url":"https://example.com/x.png","thumbnail":{"url":"https://example.com/x.png","proxy_url":"https://images-ext-1.discordapp.net/external/abc/https/example.com/x.png","width":10,"height":10}},
  {"type":"video","url":"https://youtube.com/watch?v=1","thumbnail":{"url":"https://i.ytimg.com/vi/1/hq.jpg"}},
  {"type":"rich","title":"t","image":{"url":"https://cdn.discordapp.com/embed/x.webp","proxy_url":"https://media.discordapp.net/embed/x.webp"}}]}`

func TestRefs(t *testing.T) {
	var m discordgo.Message
	if err := json.Unmarshal([]byte(messageJSON), &m); err != nil {
		t.Fatal(err)
	}
	got := Refs(&m, 0, 8<<20)
	want := []struct {
		source   Source
		typ, url string
	}{
		{SourceAttachment, "image/png", "https://cdn.discordapp.com/attachments/1/11/cat.PNG?ex=6750&is=674e&hm=ab"},
		{SourceEmbed, "image/png", "https://example.com/x.png"},
		{SourceEmbed, "image/webp", "https://cdn.discordapp.com/embed/x.webp"},
	}
	if len(got) != len(want) {
		t.Fatalf("refs = %+v, want %d", got, len(want))
	}
	for i, w := range want {
		if got[i].Source != w.source || got[i].TypeOf() != w.typ || got[i].URL != w.url || got[i].MessageID != "900" {
			t.Errorf("ref %d = %+v (type %s), want %+v", i, got[i], got[i].TypeOf(), w)
		}
	}
	if got := Refs(&m, 1, 0); len(got) != 1 || got[0].Source != SourceAttachment {
		t.Errorf("max 1: %+v", got)
	}
	if Refs(nil, 0, 0) != nil {
		t.Error("nil message has images")
	}
}

func encode(t *testing.T, f func(*bytes.Buffer, image.Image) error) []byte {
	t.Helper()
	img := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, color.White})
	var b bytes.Buffer
	if err := f(&b, img); err != nil {
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

// webp builds the 30-byte head of an extended (VP8X) WebP with the given flags byte.
func webp(flags byte) []byte {
	b := []byte("RIFF\x16\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00")
	return append(b, flags, 0, 0, 0, 3, 0, 0, 3, 0, 0)
}

func TestSniff(t *testing.T) {
	pngData := encode(t, func(b *bytes.Buffer, i image.Image) error { return png.Encode(b, i) })
	jpegData := encode(t, func(b *bytes.Buffer, i image.Image) error { return jpeg.Encode(b, i, nil) })
	gifData := encode(t, func(b *bytes.Buffer, i image.Image) error { return gif.Encode(b, i, nil) })
	tests := []struct {
		name string
		data []byte
		mime string
		ok   bool
	}{
		{"png", pngData, "image/png", true},
		{"jpeg", jpegData, "image/jpeg", true},
		{"still gif", gifData, "image/gif", true},
		{"animated gif", animatedGIF(t), "image/gif", false},
		{"truncated gif", gifData[:len(gifData)-4], "image/gif", false},
		{"still webp", webp(0x00), "image/webp", true},
		{"animated webp", webp(0x02), "image/webp", false},
		{"html", []byte("<!doctype html><title>x</title>"), "", false},
		{"empty", nil, "", false},
	}
	for _, tt := range tests {
		mime, ok := Sniff(tt.data)
		if mime != tt.mime || ok != tt.ok {
			t.Errorf("%s: Sniff = %q, %v; want %q, %v", tt.name, mime, ok, tt.mime, tt.ok)
		}
	}
}

func TestAllowed(t *testing.T) {
	f := &Fetcher{ExtraHosts: []string{"127.0.0.1:8080"}}
	for u, want := range map[string]bool{
		"https://cdn.discordapp.com/attachments/1/2/a.png?ex=1": true,
		"https://media.discordapp.net/attachments/1/2/a.png":    true,
		"https://CDN.discordapp.com/a.png":                      true,
		"http://cdn.discordapp.com/a.png":                       false,
		"https://cdn.discordapp.com:8443/a.png":                 false,
		"https://user:pw@cdn.discordapp.com/a.png":              false,
		"https://cdn.discordapp.com.evil.example/a.png":         false,
		"https://example.com/a.png":                             false,
		"https://images-ext-1.discordapp.net/external/x":        true,
		"https://images-ext-x.discordapp.net/external/x":        false,
		"https://images-ext-.discordapp.net/external/x":         false,
		"http://127.0.0.1:8080/attachments/1/2/a.png":           true,
		"http://127.0.0.1:9090/a.png":                           false,
		"file:///etc/passwd":                                    false,
	} {
		if got := f.Allowed(u); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", u, got, want)
		}
	}
}

// TestFetch runs the fetcher against an HTTP server standing in for the CDN (allowed as an
// extra host, as the simulator's is).
func TestFetch(t *testing.T) {
	pngData := encode(t, func(b *bytes.Buffer, i image.Image) error { return png.Encode(b, i) })
	mux := http.NewServeMux()
	mux.HandleFunc("/ok.png", func(w http.ResponseWriter, r *http.Request) { w.Write(pngData) })
	mux.HandleFunc("/anim.gif", func(w http.ResponseWriter, r *http.Request) { w.Write(animatedGIF(t)) })
	mux.HandleFunc("/big.png", func(w http.ResponseWriter, r *http.Request) {
		w.Write(pngData)
		w.Write(make([]byte, 4096)) // streamed past the limit, no Content-Length check possible
		w.(http.Flusher).Flush()
		w.Write(make([]byte, 4096))
	})
	mux.HandleFunc("/page.png", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>not an image</html>")) })
	mux.HandleFunc("/gone.png", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "expired", http.StatusNotFound) })
	mux.HandleFunc("/away.png", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://example.com/x.png", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	f := &Fetcher{ExtraHosts: []string{host}, MaxBytes: 1024}
	ctx := context.Background()

	img, err := f.Fetch(ctx, Ref{URL: srv.URL + "/ok.png", ContentType: "image/png"})
	if err != nil || img.MIMEType != "image/png" || !bytes.Equal(img.Data, pngData) {
		t.Fatalf("ok.png: %v, %q", err, img.MIMEType)
	}
	for _, tt := range []struct {
		ref  Ref
		want error
	}{
		{Ref{URL: srv.URL + "/anim.gif"}, ErrNotImage},
		{Ref{URL: srv.URL + "/big.png"}, ErrTooLarge},
		{Ref{URL: srv.URL + "/ok.png", Size: 5000}, ErrTooLarge},
		{Ref{URL: srv.URL + "/page.png"}, ErrNotImage},
		{Ref{URL: srv.URL + "/away.png"}, ErrHostNotAllowed},
		{Ref{URL: "https://example.com/x.png"}, ErrHostNotAllowed},
	} {
		if _, err := f.Fetch(ctx, tt.ref); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.ref.URL, err, tt.want)
		}
	}
	if _, err := f.Fetch(ctx, Ref{URL: srv.URL + "/gone.png"}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("expired link: %v", err)
	}
	// The error names the host, never the signed query string.
	_, err = f.Fetch(ctx, Ref{URL: srv.URL + "/gone.png?hm=secret-signature"})
	if err == nil || strings.Contains(err.Error(), "secret-signature") {
		t.Errorf("error shows the signature: %v", err)
	}
}

func TestExpired(t *testing.T) {
	now := time.Unix(0x6750, 0)
	for u, want := range map[string]bool{
		"https://cdn.discordapp.com/attachments/1/11/cat.png?ex=6751&is=674e&hm=ab": false,
		"https://cdn.discordapp.com/attachments/1/11/cat.png?ex=6750&is=674e&hm=ab": true,
		"https://cdn.discordapp.com/attachments/1/11/cat.png?ex=674f&is=674e&hm=ab": true,
		"https://images-ext-1.discordapp.net/external/abc/https/example.com/x.png":  false,
		"https://cdn.discordapp.com/a.png?ex=zz":                                    false,
		"::not a url":                                                               false,
	} {
		if got := Expired(u, now); got != want {
			t.Errorf("Expired(%s) = %v, want %v", u, got, want)
		}
	}
}

func FuzzRefs(f *testing.F) {
	f.Add([]byte(messageJSON))
	f.Add([]byte(`{"attachments":[null,{"url":"x.gif"}],"embeds":[null,{"type":"gifv","thumbnail":{"proxy_url":"https://media.discordapp.net/a"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m discordgo.Message
		if json.Unmarshal(data, &m) != nil {
			return
		}
		for _, r := range Refs(&m, 4, 1<<20) {
			if r.TypeOf() == "" || (r.URL == "" && r.ProxyURL == "") || r.Size > 1<<20 {
				t.Fatalf("bad ref %+v", r)
			}
		}
	})
}

func FuzzSniff(f *testing.F) {
	f.Add([]byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"))
	f.Add(webp(2))
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mime, ok := Sniff(data)
		if ok && mime == "" {
			t.Fatal("accepted without a type")
		}
	})
}
