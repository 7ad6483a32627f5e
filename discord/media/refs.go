// Package media finds the images people post in Discord messages (attachments and image
// embeds) and fetches them from Discord's CDN, so the reply model can see them.
//
// Only Discord's own hosts are fetched from (the CDN, the media proxy and the external-image
// proxy, plus hosts the operator adds, such as a local simulator): a message's embed may point
// anywhere, and banter must not fetch arbitrary URLs on a stranger's say-so. Every fetch is bounded in size and
// time, and the bytes must really be a still image of a type the models read.
package media

import (
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
)

// Source says where in a message an image was found.
type Source string

// Sources.
const (
	SourceAttachment Source = "attachment"
	SourceEmbed      Source = "embed"
)

// Ref is one image a message shows: where to fetch it and what Discord says it is.
type Ref struct {
	MessageID string
	Source    Source
	// URL is the CDN URL; ProxyURL the media proxy's (either may be empty for embeds).
	URL, ProxyURL string
	Filename      string
	// ContentType is Discord's MIME type for attachments ("" when it did not say).
	ContentType string
	// Size in bytes, for attachments (0 when unknown).
	Size int64
}

// MIME types the models accept; GIFs only when not animated (checked on the bytes).
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true, "image/gif": true}

// TypeOf is the image MIME type a Ref claims, from its content type or else its file
// extension; "" when it is not an image type the models read.
func (r Ref) TypeOf() string {
	ct := strings.ToLower(strings.TrimSpace(strings.Split(r.ContentType, ";")[0]))
	if ct != "" {
		if imageTypes[ct] {
			return ct
		}
		return ""
	}
	name := r.Filename
	if name == "" {
		name = urlPath(r.URL)
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".webp":
		return "image/webp"
	case ".gif":
		return "image/gif"
	}
	return ""
}

func urlPath(u string) string {
	u, _, _ = strings.Cut(u, "?")
	u, _, _ = strings.Cut(u, "#")
	return u
}

// Refs lists the images of a message, attachments first, then image embeds, at most max
// (0: no limit), skipping what is not an image the models read and attachments Discord says
// are larger than maxBytes (0: no limit). A nil message has none.
func Refs(m *discordgo.Message, max int, maxBytes int64) []Ref {
	if m == nil {
		return nil
	}
	var out []Ref
	add := func(r Ref) bool {
		if r.URL == "" && r.ProxyURL == "" {
			return true
		}
		if r.TypeOf() == "" || (maxBytes > 0 && r.Size > maxBytes) {
			return true
		}
		out = append(out, r)
		return max <= 0 || len(out) < max
	}
	for _, a := range m.Attachments {
		if a == nil {
			continue
		}
		if !add(Ref{MessageID: m.ID, Source: SourceAttachment, URL: a.URL, ProxyURL: a.ProxyURL,
			Filename: a.Filename, ContentType: a.ContentType, Size: int64(a.Size)}) {
			return out
		}
	}
	for _, e := range m.Embeds {
		if e == nil {
			continue
		}
		// An image embed (a posted image link) or a gifv's still thumbnail; a rich embed's
		// own image. Video and link previews' thumbnails are not what people post to be seen.
		var ref Ref
		switch {
		case e.Image != nil:
			ref = Ref{URL: e.Image.URL, ProxyURL: e.Image.ProxyURL}
		case e.Thumbnail != nil && (e.Type == discordgo.EmbedTypeImage || e.Type == discordgo.EmbedTypeGifv):
			ref = Ref{URL: e.Thumbnail.URL, ProxyURL: e.Thumbnail.ProxyURL}
		default:
			continue
		}
		ref.MessageID, ref.Source = m.ID, SourceEmbed
		// An embed's own URL may point anywhere; its proxy URL is Discord's copy. Name the type
		// from whichever path carries an extension.
		ref.Filename = path.Base(urlPath(ref.ProxyURL))
		if path.Ext(ref.Filename) == "" {
			ref.Filename = path.Base(urlPath(ref.URL))
		}
		if !add(ref) {
			return out
		}
	}
	return out
}

// Expired reports whether a signed Discord CDN URL has expired at now: its ex parameter (hex
// Unix seconds) is not after now. A URL without one (an embed's proxy URL, an unsigned link)
// never expires.
// https://discord.com/developers/docs/reference#signed-attachment-cdn-urls
func Expired(u string, now time.Time) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	ex, err := strconv.ParseInt(p.Query().Get("ex"), 16, 64)
	if err != nil {
		return false
	}
	return now.Unix() >= ex
}
