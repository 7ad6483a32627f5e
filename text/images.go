package text

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/discord/media"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/safety"
	"github.com/banterbot/banter/store"
)

// Images in the conversation. Every message is stored with the images it shows (attachments
// and image embeds, media.Refs); when a context is built, the images of the messages shown
// (the turn's first, then the anchor's and the newest) become image inputs of the request, up
// to images.maxPerTurn — those the bot has not answered yet: an image posted before its last
// message in the channel is labelled "[earlier image, …]" and not sent again — each labelled in its message's line ("[image 1: cat.png]") and in a
// legend saying who posted it. In inline mode banter downloads each image (only from
// Discord's CDN and media proxy, plus configured hosts) and sends its bytes; in url mode the
// provider fetches Discord's URL itself. Discord's signed URLs expire: an expired one is
// refreshed by fetching its message again over REST. An image that cannot be had is noted
// "[image unavailable]"; it never fails the reply.

// maxStoredImages bounds the images kept per message.
const maxStoredImages = 10

// storedImages lists the images a Discord message shows, as stored.
func storedImages(m *discordgo.Message) []store.Image {
	refs := media.Refs(m, maxStoredImages, 0)
	if len(refs) == 0 {
		return nil
	}
	out := make([]store.Image, len(refs))
	for i, r := range refs {
		out[i] = store.Image{Source: string(r.Source), URL: r.URL, ProxyURL: r.ProxyURL, Filename: r.Filename,
			ContentType: r.ContentType, Size: r.Size}
	}
	return out
}

func refOf(msgID string, im store.Image) media.Ref {
	return media.Ref{MessageID: msgID, Source: media.Source(im.Source), URL: im.URL, ProxyURL: im.ProxyURL,
		Filename: im.Filename, ContentType: im.ContentType, Size: im.Size}
}

// imageName is how an image is named to the model.
func imageName(im store.Image) string {
	if im.Filename != "" && im.Filename != "." && im.Filename != "/" {
		return im.Filename
	}
	return "image"
}

// configFetcher is an image fetcher with the configuration it was built from.
type configFetcher struct {
	cfg *config.Config
	f   *media.Fetcher
}

// fetcher returns the image fetcher of cfg: Discord's hosts, images.extraHosts and the host of
// discord.apiUrl when it is not Discord's (the simulator, whose CDN serves on its API host).
func (s *Service) fetcher(cfg *config.Config) *media.Fetcher {
	if cf := s.fetch.Load(); cf != nil && cf.cfg == cfg {
		return cf.f
	}
	hosts := append([]string(nil), cfg.Images.ExtraHosts...)
	if u, err := url.Parse(cfg.Discord.APIURL); err == nil && u.Host != "" && !strings.HasSuffix(u.Hostname(), "discord.com") {
		hosts = append(hosts, u.Host)
	}
	f := &media.Fetcher{Client: s.opts.ImageClient, ExtraHosts: hosts, MaxBytes: int64(cfg.Images.MaxBytes),
		Timeout: time.Duration(cfg.Images.FetchTimeoutSeconds) * time.Second}
	s.fetch.Store(&configFetcher{cfg: cfg, f: f})
	return f
}

// shownImage is one image of the conversation and what became of it.
type shownImage struct {
	msg store.Message
	im  store.Image
	n   int // its number in the prompt (1-based); 0 when not sent
	// earlier: posted before the bot's last message in the channel, and neither a trigger's
	// nor the message replied to: labelled, not sent again (attachable).
	earlier bool
	input   llm.Image // what is sent
	err     error     // why it could not be had
}

// imageSet is the images of one context: by message id, in their lines' order.
type imageSet struct {
	byMsg  map[string][]*shownImage
	inputs []*shownImage // sent, in number order
}

// label is what a message's line says of its images.
func (set *imageSet) label(id string, enabled bool) string {
	var b strings.Builder
	for _, si := range set.byMsg[id] {
		switch {
		case si.n > 0:
			fmt.Fprintf(&b, " [image %d: %s]", si.n, imageName(si.im))
		case si.err != nil:
			b.WriteString(" [image unavailable]")
		case si.earlier && enabled:
			fmt.Fprintf(&b, " [earlier image, not attached again: %s]", imageName(si.im))
		case enabled:
			fmt.Fprintf(&b, " [image not shown: %s]", imageName(si.im))
		default:
			fmt.Fprintf(&b, " [image: %s]", imageName(si.im))
		}
	}
	return b.String()
}

// hasEarlier reports whether a line is labelled with an earlier image (not attached again).
func (set *imageSet) hasEarlier() bool {
	for _, sis := range set.byMsg {
		for _, si := range sis {
			if si.earlier && si.err == nil {
				return true
			}
		}
	}
	return false
}

// gatherImages picks the images of the messages shown (the triggers', newest first, the
// anchor's, then the chain's and the cluster's, newest first), up to images.maxPerTurn, and
// makes each an image input: fetched (inline) or by URL, refreshing expired URLs. Only the
// images the bot has not had its turn at are sent (attachable): an image posted before its
// last message in the channel (lastBot) was in the requests of that reply, and is labelled,
// not sent again with every later turn, unless a trigger shows it or replies to its message.
// Every image of a shown message is labelled, including those over the cap.
func (s *Service) gatherImages(ctx context.Context, cfg *config.Config, c *convo, lastBot time.Time) imageSet {
	set := imageSet{byMsg: map[string][]*shownImage{}}
	var order []store.Message
	seen := map[string]bool{}
	add := func(ms []store.Message, newestFirst bool) {
		for i := range ms {
			m := ms[i]
			if newestFirst {
				m = ms[len(ms)-1-i]
			}
			if len(m.Images) > 0 && !seen[m.ID] {
				seen[m.ID] = true
				order = append(order, m)
			}
		}
	}
	add([]store.Message{c.primary}, false)
	add(c.triggers, true)
	if c.anchor != nil {
		add([]store.Message{*c.anchor}, false)
	}
	add(c.chain, true)
	add(c.cluster, true)
	if len(order) == 0 {
		return set
	}
	var picked []*shownImage
	attach := attachable(c, lastBot)
	for _, m := range order {
		for _, im := range m.Images {
			si := &shownImage{msg: m, im: im, earlier: !attach(m)}
			set.byMsg[m.ID] = append(set.byMsg[m.ID], si)
			if cfg.Images.Enabled && !si.earlier && len(picked) < cfg.Images.MaxPerTurn {
				picked = append(picked, si)
			}
		}
	}
	s.resolveImages(ctx, cfg, c.primary.ChannelID, picked)
	// Number them in the order their lines appear, so the legend reads top to bottom.
	for _, m := range c.all() {
		for _, si := range set.byMsg[m.ID] {
			if si.err == nil && (len(si.input.Data) > 0 || si.input.URL != "") {
				set.inputs = append(set.inputs, si)
				si.n = len(set.inputs)
			}
		}
	}
	return set
}

// attachable reports whether a shown message's images are sent with the request: those of the
// triggers and of the messages they reply to (the anchor), and those posted after the bot's
// last message in the channel (lastBot, or its newest line shown, whichever is later).
func attachable(c *convo, lastBot time.Time) func(store.Message) bool {
	always := map[string]bool{c.primary.ID: true, c.primary.ReplyToID: true}
	for _, t := range c.triggers {
		always[t.ID], always[t.ReplyToID] = true, true
	}
	if c.anchor != nil {
		always[c.anchor.ID] = true
	}
	for _, m := range c.all() {
		if m.IsSelf && m.CreatedAt.After(lastBot) {
			lastBot = m.CreatedAt
		}
	}
	return func(m store.Message) bool {
		return always[m.ID] || m.CreatedAt.After(lastBot)
	}
}

// resolveImages makes each picked image an input, concurrently: a refreshed URL when the
// stored one has expired, then the URL itself (url mode) or the downloaded bytes (inline).
// Failures are kept in si.err.
func (s *Service) resolveImages(ctx context.Context, cfg *config.Config, channelID string, picked []*shownImage) {
	if len(picked) == 0 {
		return
	}
	f := s.fetcher(cfg)
	refresh := s.refresher(ctx, channelID)
	var wg sync.WaitGroup
	for _, si := range picked {
		wg.Add(1)
		go func() {
			defer wg.Done()
			si.input, si.err = s.imageInput(ctx, cfg, f, refresh, si.msg, si.im)
			result := "url"
			switch {
			case si.err != nil:
				result = "unavailable"
				s.logger.Info("image_unavailable", "message_id", si.msg.ID, "channel_id", channelID, "error", si.err.Error())
			case len(si.input.Data) > 0:
				result = "inline"
			}
			s.opts.Metrics.image(result)
		}()
	}
	wg.Wait()
}

// errImageSize is an image Discord says is larger than images.maxBytes.
var errImageSize = errors.New("larger than images.maxBytes")

// imageInput makes one stored image an input.
func (s *Service) imageInput(ctx context.Context, cfg *config.Config, f *media.Fetcher, refresh func(string) (store.Message, bool),
	msg store.Message, im store.Image) (llm.Image, error) {
	if im.Size > int64(cfg.Images.MaxBytes) {
		return llm.Image{}, errImageSize
	}
	ref := refOf(msg.ID, im)
	fresh := func() (media.Ref, bool) {
		m, ok := refresh(msg.ID)
		if !ok {
			return ref, false
		}
		for _, n := range m.Images {
			if n.Source == im.Source && n.Filename == im.Filename {
				return refOf(msg.ID, n), true
			}
		}
		return ref, false
	}
	u := f.URL(ref)
	if u == "" {
		return llm.Image{}, media.ErrHostNotAllowed
	}
	if media.Expired(u, s.now()) {
		r, ok := fresh()
		if !ok || f.URL(r) == "" {
			return llm.Image{}, errors.New("image url expired and the message could not be fetched again")
		}
		ref, u = r, f.URL(r)
	}
	if cfg.Images.Mode == "url" {
		return llm.Image{URL: u}, nil
	}
	img, err := f.Fetch(ctx, ref)
	if err != nil && !errors.Is(err, media.ErrNotImage) && !errors.Is(err, media.ErrTooLarge) && !errors.Is(err, media.ErrHostNotAllowed) {
		// A 404/403 from the CDN: the signature went stale early. Fetch the message again once.
		if r, ok := fresh(); ok {
			img, err = f.Fetch(ctx, r)
		}
	}
	if err != nil {
		return llm.Image{}, err
	}
	return llm.Image{Data: img.Data, MIMEType: img.MIMEType}, nil
}

// refresher returns a function that fetches a message of the channel again over REST (for its
// freshly signed image URLs), stores it, and returns it; each message is fetched once.
func (s *Service) refresher(ctx context.Context, channelID string) func(string) (store.Message, bool) {
	var mu sync.Mutex
	done := map[string]*refreshed{}
	return func(id string) (store.Message, bool) {
		mu.Lock()
		r, ok := done[id]
		if !ok {
			r = &refreshed{}
			done[id] = r
		}
		mu.Unlock()
		r.once.Do(func() { r.m, r.ok = s.refetch(ctx, channelID, id) })
		return r.m, r.ok
	}
}

type refreshed struct {
	once sync.Once
	m    store.Message
	ok   bool
}

// refetch fetches a message of a channel over REST and stores it (fresh image URLs).
func (s *Service) refetch(ctx context.Context, channelID, id string) (store.Message, bool) {
	dm, err := s.opts.Discord.ChannelMessage(channelID, id, discordgo.WithContext(ctx))
	if err != nil {
		var re *discordgo.RESTError
		if !errors.As(err, &re) || re.Response == nil || re.Response.StatusCode != http.StatusNotFound {
			s.logger.Warn("message_fetch_failed", "message_id", id, "channel_id", channelID, "error", err.Error())
		}
		return store.Message{}, false
	}
	if dm.ChannelID == "" {
		dm.ChannelID = channelID
	}
	if dm.GuildID == "" {
		if old, err := s.opts.Store.Message(ctx, id); err == nil {
			dm.GuildID = old.GuildID
		}
	}
	rec := storedFromDiscord(dm, s.channelInfo(ctx, channelID), dm.Author != nil && dm.Author.ID == s.selfID())
	if _, err := s.saveMessage(ctx, rec, "image_refresh"); err != nil {
		s.logger.Warn("store_failed", "op", "save_message", "message_id", id, "error", err.Error())
	}
	s.opts.Metrics.image("refreshed")
	return rec, true
}

// chatImageLookback is how many of a channel's latest messages ChatImage looks through.
const chatImageLookback = 20

// ChatImage is the last image posted in a channel's text chat (a voice channel's) within
// images.voiceChatMinutes, as an image input for a voice turn's model, with a caption saying
// who posted it and when. ok is false when the setting is off (0) or images are disabled, when
// no recent message that may be shown has an image, or when it cannot be had.
func (s *Service) ChatImage(ctx context.Context, channelID string) (img llm.Image, caption string, ok bool) {
	cfg := s.cfg()
	window := time.Duration(cfg.Images.VoiceChatMinutes) * time.Minute
	if window <= 0 || !cfg.Images.Enabled {
		return llm.Image{}, "", false
	}
	now := s.now()
	recent, err := s.opts.Store.RecentMessages(ctx, channelID, time.Time{}, chatImageLookback)
	if err != nil {
		s.logger.Warn("store_failed", "op", "recent_messages", "channel_id", channelID, "error", err.Error())
		return llm.Image{}, "", false
	}
	for i := len(recent) - 1; i >= 0; i-- {
		m := recent[i]
		if now.Sub(m.CreatedAt) > window {
			break
		}
		if len(m.Images) == 0 || m.IsSelf || s.excluded(cfg, m) != safety.Allowed {
			continue
		}
		im := m.Images[len(m.Images)-1]
		input, err := s.imageInput(ctx, cfg, s.fetcher(cfg), s.refresher(ctx, channelID), m, im)
		if err != nil {
			s.logger.Info("image_unavailable", "message_id", m.ID, "channel_id", channelID, "error", err.Error())
			return llm.Image{}, "", false
		}
		return input, fmt.Sprintf("%s posted this image (%s) in the channel's text chat %s.", m.AuthorName, imageName(im), age(now, m.CreatedAt)), true
	}
	return llm.Image{}, "", false
}
