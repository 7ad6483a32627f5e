package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// discordHost reports whether host is one Discord serves message images from: the CDN
// (attachments), the media proxy (attachments and embeds) and the external-image proxy
// (images-ext-N.discordapp.net: Discord's copy of an image a link embed shows).
func discordHost(host string) bool {
	switch host {
	case "cdn.discordapp.com", "media.discordapp.net":
		return true
	}
	n, ok := strings.CutPrefix(host, "images-ext-")
	n, ok2 := strings.CutSuffix(n, ".discordapp.net")
	return ok && ok2 && len(n) > 0 && len(n) <= 2 && strings.Trim(n, "0123456789") == ""
}

// Image is a fetched still image.
type Image struct {
	Data     []byte
	MIMEType string
}

// Fetcher downloads message images from Discord's hosts only.
type Fetcher struct {
	// Client makes the requests (nil: a client with Timeout). Redirects are followed only to
	// allowed hosts.
	Client *http.Client
	// ExtraHosts are allowed besides Discord's CDN and media proxy, as host or host:port (the
	// Discord simulator's API host, from discord.apiUrl). They may be plain http.
	ExtraHosts []string
	// MaxBytes bounds one image (default 8 MiB).
	MaxBytes int64
	// Timeout bounds one fetch (default 10 s).
	Timeout time.Duration
}

// Errors a fetch reports (wrapped, with the URL's host).
var (
	ErrHostNotAllowed = errors.New("media: host not allowed (only Discord's CDN and media proxy)")
	ErrTooLarge       = errors.New("media: image too large")
	ErrNotImage       = errors.New("media: not a still png, jpeg, webp or gif image")
)

// Allowed reports whether u may be fetched: https on Discord's hosts, or an extra host.
func (f *Fetcher) Allowed(u string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || p.User != nil {
		return false
	}
	if slices.Contains(f.ExtraHosts, p.Host) && (p.Scheme == "http" || p.Scheme == "https") {
		return true
	}
	return p.Scheme == "https" && discordHost(strings.ToLower(p.Hostname())) && p.Port() == ""
}

// URL is the first of the ref's URLs that may be fetched, or "".
func (f *Fetcher) URL(r Ref) string {
	for _, u := range []string{r.URL, r.ProxyURL} {
		if u != "" && f.Allowed(u) {
			return u
		}
	}
	return ""
}

// Fetch downloads the ref's image and checks that it is a still image of a type the models
// read (by its bytes, not by what the message claimed).
func (f *Fetcher) Fetch(ctx context.Context, r Ref) (Image, error) {
	u := f.URL(r)
	if u == "" {
		return Image{}, fmt.Errorf("fetch %s: %w", hostOf(r.URL, r.ProxyURL), ErrHostNotAllowed)
	}
	maxBytes := f.MaxBytes
	if maxBytes <= 0 {
		maxBytes = 8 << 20
	}
	if r.Size > maxBytes {
		return Image{}, fmt.Errorf("fetch %s: %w (%d bytes > %d)", hostOf(u), ErrTooLarge, r.Size, maxBytes)
	}
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Image{}, fmt.Errorf("fetch %s: %w", hostOf(u), err)
	}
	client := f.client()
	resp, err := client.Do(req)
	if err != nil {
		return Image{}, fmt.Errorf("fetch %s: %w", hostOf(u), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Image{}, fmt.Errorf("fetch %s: status %d", hostOf(u), resp.StatusCode)
	}
	if resp.ContentLength > maxBytes {
		return Image{}, fmt.Errorf("fetch %s: %w (%d bytes > %d)", hostOf(u), ErrTooLarge, resp.ContentLength, maxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return Image{}, fmt.Errorf("fetch %s: %w", hostOf(u), err)
	}
	if int64(len(data)) > maxBytes {
		return Image{}, fmt.Errorf("fetch %s: %w (over %d bytes)", hostOf(u), ErrTooLarge, maxBytes)
	}
	mime, ok := Sniff(data)
	if !ok {
		return Image{}, fmt.Errorf("fetch %s: %w", hostOf(u), ErrNotImage)
	}
	return Image{Data: data, MIMEType: mime}, nil
}

// client returns the configured client with redirects limited to allowed hosts.
func (f *Fetcher) client() *http.Client {
	c := http.Client{Timeout: 0}
	if f.Client != nil {
		c = *f.Client
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 3 || !f.Allowed(req.URL.String()) {
			return fmt.Errorf("redirect to %s: %w", req.URL.Host, ErrHostNotAllowed)
		}
		return nil
	}
	return &c
}

func hostOf(urls ...string) string {
	for _, u := range urls {
		if p, err := url.Parse(u); err == nil && p.Host != "" {
			return p.Host
		}
	}
	return "(no url)"
}

// Sniff names the image type of data when it is a still png, jpeg, webp or gif the models read:
// animated GIFs and WebPs are refused.
func Sniff(data []byte) (string, bool) {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png", true
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return "image/jpeg", true
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "image/webp", !webpAnimated(data)
	case bytes.HasPrefix(data, []byte("GIF87a")) || bytes.HasPrefix(data, []byte("GIF89a")):
		frames, ok := gifFrames(data)
		return "image/gif", ok && frames == 1
	}
	return "", false
}

// webpAnimated reads the VP8X header's animation flag.
// https://developers.google.com/speed/webp/docs/riff_container#extended_file_format
func webpAnimated(data []byte) bool {
	return len(data) >= 21 && string(data[12:16]) == "VP8X" && data[20]&0x02 != 0
}

// gifFrames counts a GIF's image descriptors, walking its blocks without decoding any pixels.
// It stops at 2 (enough to know it is animated). ok is false for a malformed stream.
// GIF89a layout: https://www.w3.org/Graphics/GIF/spec-gif89a.txt (sections 17–27).
func gifFrames(data []byte) (frames int, ok bool) {
	const header = 6 + 7 // signature+version, logical screen descriptor
	if len(data) < header {
		return 0, false
	}
	i := header
	if flags := data[10]; flags&0x80 != 0 { // global color table
		i += 3 << ((flags & 0x07) + 1)
	}
	skipSubBlocks := func() bool {
		for i < len(data) {
			n := int(data[i])
			i++
			if n == 0 {
				return true
			}
			i += n
		}
		return false
	}
	for i < len(data) {
		switch data[i] {
		case 0x21: // extension: label, then sub-blocks
			i += 2
			if !skipSubBlocks() {
				return frames, false
			}
		case 0x2C: // image descriptor: 9 bytes, optional local color table, LZW size, data
			if i+10 > len(data) {
				return frames, false
			}
			flags := data[i+9]
			i += 10
			if flags&0x80 != 0 {
				i += 3 << ((flags & 0x07) + 1)
			}
			i++ // LZW minimum code size
			if !skipSubBlocks() {
				return frames, false
			}
			frames++
			if frames > 1 {
				return frames, true
			}
		case 0x3B: // trailer
			return frames, frames > 0
		default:
			return frames, false
		}
	}
	return frames, false
}
