package text

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/banterbot/banter/config"
	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/memory"
	"github.com/banterbot/banter/safety"
	"github.com/banterbot/banter/store"
)

// Lookups: with replyFollowupLlm enabled, the reply model may call, besides
// send_discord_message, the lookups switched on in lookups.*: web_search (the provider's hosted
// web search, run as its own call), memory_lookup (a full-text search of the stored messages
// of this channel, or the guild by config, filtered like everything shown) and image_lookup
// (the vision model describes an earlier image of this channel by message id). Each runs
// bounded in time (lookups.timeoutSeconds) and size (lookups.maxResultChars), is logged
// (lookup) and counted (banter_text_lookups_total); their results feed the follow-up pass,
// which writes the final reply. A lookup that fails is reported to the follow-up pass as
// failed, never fatal.

const (
	webSearchName    = "web_search"
	memoryLookupName = "memory_lookup"
	imageLookupName  = "image_lookup"
)

// maxQueryLen bounds a lookup's query, in characters.
const maxQueryLen = 300

func queryTool(name, description, about string) llm.Tool {
	return llm.Tool{
		Name:        name,
		Description: description,
		Parameters: map[string]any{
			"type":                 "object",
			"properties":           map[string]any{"query": map[string]any{"type": "string", "description": about}},
			"required":             []any{"query"},
			"additionalProperties": false,
		},
		Strict: true,
	}
}

var (
	webSearchTool = queryTool(webSearchName,
		"Search the web for current facts you do not know. The results come back before you answer.",
		"What to search for, in a few words.")
	memoryLookupTool = queryTool(memoryLookupName,
		"Search older messages of this conversation's channel (beyond the ones shown) by words. "+
			"The matching messages come back before you answer.",
		"Words the messages contain.")
	imageLookupTool = llm.Tool{
		Name: imageLookupName,
		Description: "Get a description of an image posted in this channel that you cannot see (a line marked " +
			"[image not shown], [earlier image] or [image], or an older message), by the id of its message. It comes back before you answer.",
		Parameters: map[string]any{
			"type":                 "object",
			"properties":           map[string]any{"message_id": map[string]any{"type": "string", "description": "Id of the message with the image."}},
			"required":             []any{"message_id"},
			"additionalProperties": false,
		},
		Strict: true,
	}
)

// lookupsOffered lists the lookup tools of cfg (none unless replyFollowupLlm is enabled).
func lookupsOffered(cfg *config.Config) []llm.Tool {
	if !cfg.ReplyFollowupLLM.Enabled {
		return nil
	}
	l := cfg.Lookups
	var out []llm.Tool
	if l.WebSearch.Enabled {
		out = append(out, webSearchTool)
	}
	if l.Memory.Enabled {
		out = append(out, memoryLookupTool)
	}
	if l.Image.Enabled && cfg.Images.Enabled {
		out = append(out, imageLookupTool)
	}
	return out
}

// lookupCall is one lookup the model asked for, its arguments parsed.
type lookupCall struct {
	name      string
	query     string // web_search, memory_lookup
	messageID string // image_lookup
	err       error  // the arguments could not be used
}

// describe names the call for the follow-up pass and the logs.
func (c lookupCall) describe() string {
	if c.name == imageLookupName {
		return fmt.Sprintf("%s(message %s)", c.name, c.messageID)
	}
	return fmt.Sprintf("%s(%q)", c.name, c.query)
}

// parseLookup parses a lookup call's untrusted arguments.
func parseLookup(name, raw string) lookupCall {
	c := lookupCall{name: name}
	if name == imageLookupName {
		var f struct {
			MessageID json.RawMessage `json:"message_id"`
		}
		if c.err = decodeObject(raw, &f); c.err != nil {
			return c
		}
		c.messageID, c.err = parseMessageID(f.MessageID)
		if c.err == nil && c.messageID == "" {
			c.err = &toolCallError{reason: "bad_target", detail: "message_id is required"}
		}
		return c
	}
	var f struct {
		Query json.RawMessage `json:"query"`
	}
	if c.err = decodeObject(raw, &f); c.err != nil {
		return c
	}
	var q string
	if len(f.Query) == 0 || json.Unmarshal(f.Query, &q) != nil {
		c.err = &toolCallError{reason: "bad_query", detail: "query must be a string"}
		return c
	}
	q = strings.Join(strings.Fields(q), " ")
	if q == "" {
		c.err = &toolCallError{reason: "bad_query", detail: "query is empty"}
		return c
	}
	c.query = truncate(q, maxQueryLen)
	return c
}

// lookupCalls picks the lookups a model result asks for (of those offered), at most
// lookups.maxPerTurn; the rest are logged as ignored.
func (s *Service) lookupCalls(a *attempt, res *llm.Result) []lookupCall {
	offered := map[string]bool{}
	for _, t := range a.req.Tools {
		if t.Name != sendMessageToolName {
			offered[t.Name] = true
		}
	}
	var out []lookupCall
	for _, tc := range res.ToolCalls {
		if !offered[tc.Name] {
			continue
		}
		if len(out) == a.cfg.Lookups.MaxPerTurn {
			s.logger.Info("lookup_ignored", append(a.attrs, "lookup", tc.Name, "reason", "max_per_turn")...)
			s.opts.Metrics.lookup(tc.Name, "ignored")
			continue
		}
		out = append(out, parseLookup(tc.Name, tc.Arguments))
	}
	return out
}

// lookupResult is what one lookup found, or why it found nothing.
type lookupResult struct {
	call    lookupCall
	text    string
	outcome string // ok, empty, invalid, failed, timeout
	err     error
}

// runLookups runs the calls concurrently, each within lookups.timeoutSeconds, and returns
// their results in order.
func (s *Service) runLookups(ctx context.Context, a *attempt, calls []lookupCall) []lookupResult {
	out := make([]lookupResult, len(calls))
	timeout := time.Duration(a.cfg.Lookups.TimeoutSeconds) * time.Second
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := s.now()
			r := lookupResult{call: c}
			if c.err != nil {
				r.outcome, r.err = "invalid", c.err
			} else {
				lctx, cancel := context.WithTimeout(ctx, timeout)
				r.text, r.err = s.lookup1(lctx, a, c)
				switch {
				case r.err != nil && lctx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
					r.outcome, r.err = "timeout", fmt.Errorf("timed out after %s", timeout)
				case r.err != nil:
					r.outcome = "failed"
				case r.text == "":
					r.outcome = "empty"
				default:
					r.outcome = "ok"
				}
				cancel()
			}
			r.text = truncate(r.text, a.cfg.Lookups.MaxResultChars)
			s.opts.Metrics.lookup(c.name, r.outcome)
			attrs := append(append([]any{}, a.attrs...), "lookup", c.name, "outcome", r.outcome,
				"latency_ms", ms(s.now().Sub(start)), "result_chars", utf8.RuneCountInString(r.text))
			switch {
			case c.messageID != "":
				attrs = append(attrs, "message_id", c.messageID)
			case c.query != "":
				attrs = append(attrs, "query", c.query)
			}
			if r.err != nil {
				attrs = append(attrs, "error", r.err.Error())
			}
			s.logger.Info("lookup", attrs...)
			out[i] = r
		}()
	}
	wg.Wait()
	return out
}

// lookup1 runs one lookup.
func (s *Service) lookup1(ctx context.Context, a *attempt, c lookupCall) (string, error) {
	switch c.name {
	case memoryLookupName:
		return s.memoryLookup(ctx, a, c.query)
	case imageLookupName:
		return s.imageLookup(ctx, a, c.messageID)
	case webSearchName:
		return s.webSearch(ctx, a, c.query)
	}
	return "", fmt.Errorf("unknown lookup %q", c.name)
}

// memoryLookup searches the stored messages: the asker's channel (lookups.memory.scope
// channel) or the guild, never another guild; blocked users and ban words are filtered as
// everywhere else, and what the model already sees is left out.
func (s *Service) memoryLookup(ctx context.Context, a *attempt, query string) (string, error) {
	cfg, p := a.cfg, a.primary.msg
	q := store.SearchQuery{GuildID: p.GuildID, Text: query, Before: p.CreatedAt,
		ExcludeAuthorIDs: cfg.Permissions.BlockedUserIDs, Limit: 2 * cfg.Lookups.Memory.MaxResults}
	if cfg.Lookups.Memory.Scope != "guild" {
		q.ChannelIDs = []string{p.ChannelID}
	}
	if q.GuildID == "" {
		return "", errors.New("no guild")
	}
	found, err := s.opts.Store.SearchMessages(ctx, q)
	if err != nil {
		return "", err
	}
	qv, meaning := s.queryEmbedding(ctx, a, query)
	if meaning {
		near, err := s.opts.Store.NearestMessages(ctx, store.VectorQuery{GuildID: q.GuildID, Model: qv.Model, Vector: qv.Vector,
			ChannelIDs: q.ChannelIDs, Before: q.Before, ExcludeAuthorIDs: q.ExcludeAuthorIDs, Limit: q.Limit})
		if err != nil { // the words' results stand
			s.logger.Warn("memory_lookup_words_only", append(a.attrs, "error", err.Error())...)
		} else {
			found = memory.BlendMessages(found, near, cfg.Embeddings.MeaningWeight, q.Limit)
		}
	}
	var b strings.Builder
	b.WriteString(s.factsFound(ctx, cfg, p.GuildID, query, qv)) // facts first, then messages
	n := 0
	for _, m := range found {
		if n == cfg.Lookups.Memory.MaxResults {
			break
		}
		if a.c.shown[m.ID] || s.excluded(cfg, m) != safety.Allowed || (m.IsSelf && !cfg.Context.IncludeOwnMessagesInHistory) {
			continue
		}
		n++
		who := m.AuthorName
		if m.IsSelf {
			who = cfg.Bot.Name + " (you)"
		}
		where := ""
		if m.ChannelID != p.ChannelID {
			where = " in " + s.channelLabel(ctx, m.ChannelID)
		}
		fmt.Fprintf(&b, "[msg %s · %s%s] %s: %s%s\n", m.ID, age(s.now(), m.CreatedAt), where, who,
			truncate(m.Content, cfg.Context.MaxCharsPerMessage), (&imageSet{byMsg: imagesOf(m)}).label(m.ID, false))
	}
	return b.String(), nil
}

// imagesOf lists a message's images, none shown, for a line's label.
func imagesOf(m store.Message) map[string][]*shownImage {
	if len(m.Images) == 0 {
		return nil
	}
	out := make([]*shownImage, len(m.Images))
	for i, im := range m.Images {
		out[i] = &shownImage{msg: m, im: im}
	}
	return map[string][]*shownImage{m.ID: out}
}

// channelLabel names a channel for a line ("#name").
func (s *Service) channelLabel(ctx context.Context, id string) string {
	if vc, ok := store.VoiceChannelOf(id); ok { // a voice transcript (docs/memory.md)
		return "voice channel #" + nonEmpty(s.channelInfo(ctx, vc).name, vc)
	}
	return "#" + nonEmpty(s.channelInfo(ctx, id).name, id)
}

// imageDescribeInstructions ask the vision model for a description.
const imageDescribeInstructions = `Describe the image for someone in a group chat who cannot see it: what it shows, any
text in it, and its tone (a joke, a screenshot, a photo). At most 80 words. Plain text only.`

// imageLookup describes an image of a message of the asker's channel through the vision model
// (lookups.image), fetched like the images shown with the conversation.
func (s *Service) imageLookup(ctx context.Context, a *attempt, messageID string) (string, error) {
	cfg, ch := a.cfg, a.primary.msg.ChannelID
	m, ok := s.lookup(ctx, ch, messageID, nil)
	if !ok || m.Deleted {
		return "", fmt.Errorf("message %s is not in this channel (or may not be shown)", messageID)
	}
	if len(m.Images) == 0 {
		return fmt.Sprintf("Message %s has no image.", messageID), nil
	}
	input, err := s.imageInput(ctx, cfg, s.fetcher(cfg), s.refresher(ctx, ch), m, m.Images[0])
	if err != nil {
		return "", fmt.Errorf("image of message %s: %w", messageID, err)
	}
	model := orDefault(cfg.Lookups.Image.Model, cfg.LLM.Model)
	res, err := s.model(s.opts.VisionModel).Generate(llm.WithSlot(ctx, SlotImageLookup), llm.GenerateRequest{Model: model, Instructions: imageDescribeInstructions,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: fmt.Sprintf("%s's %s %s, in msg %s:", m.AuthorName,
			sourceName(m.Images[0].Source), imageName(m.Images[0]), m.ID), Images: []llm.Image{input}}}})
	if err != nil {
		return "", err
	}
	if res.Text == "" {
		return "", errors.New("the vision model gave no description")
	}
	return fmt.Sprintf("%s's %s in msg %s shows: %s", m.AuthorName, imageName(m.Images[0]), m.ID, res.Text), nil
}

// webSearchInstructions ask the search model to search and report.
const webSearchInstructions = `Search the web for the query and report what you found: the facts that answer it,
briefly, each with its source. Plain text only.`

// webSearch runs the query through the provider's hosted web search (lookups.webSearch), as a
// call of its own, and returns the answer with its sources.
func (s *Service) webSearch(ctx context.Context, a *attempt, query string) (string, error) {
	cfg := a.cfg
	res, err := s.model(s.opts.WebSearchModel).Generate(llm.WithSlot(ctx, SlotWebSearch), llm.GenerateRequest{
		Model:        orDefault(cfg.Lookups.WebSearch.Model, cfg.LLM.Model),
		Instructions: webSearchInstructions,
		Messages:     []llm.Message{{Role: llm.RoleUser, Content: query}},
		Hosted:       []llm.HostedTool{llm.HostedWebSearch},
	})
	if err != nil {
		return "", err
	}
	for _, h := range res.HostedCalls {
		if h.Status == "failed" {
			return "", errors.New("the provider's web search failed")
		}
	}
	var b strings.Builder
	b.WriteString(res.Text)
	if len(res.Citations) > 0 {
		b.WriteString("\nSources:")
		for _, c := range res.Citations {
			fmt.Fprintf(&b, "\n- %s %s", c.Title, c.URL)
		}
	}
	return strings.TrimSpace(b.String()), nil
}

// renderLookups writes the lookups' results for the follow-up pass.
func renderLookups(results []lookupResult) string {
	var b strings.Builder
	b.WriteString("Before answering you asked to look things up. The results:\n")
	for i, r := range results {
		fmt.Fprintf(&b, "\n[%d] %s: ", i+1, r.call.describe())
		switch r.outcome {
		case "ok":
			b.WriteString("\n")
			b.WriteString(r.text)
			b.WriteString("\n")
		case "empty":
			b.WriteString("nothing found.\n")
		default:
			fmt.Fprintf(&b, "failed (%s). Answer without it.\n", r.err)
		}
	}
	return b.String()
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// lookupInstructions tell the reply model it may look things up first.
const lookupInstructions = `Lookups: when you need something you do not have to answer well (a fact from the web,
something said here before, an image you cannot see), call the lookup tools instead of
send_discord_message; you then get their results and write your reply. When you do not need
one, answer right away.`
