package replay

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/banterbot/banter/decision"
)

const (
	recentLines = 8 // context lines kept per channel for prompts
)

// runner holds the conversation state a replay builds up. It is used by
// one goroutine.
type runner struct {
	opts  Options
	text  *decision.TextEngine
	voice *decision.VoiceEngine
	stats stats
	bot   string // the bot's name in force

	channels map[string]*channelState // by channel id
	selfMsgs map[string]string        // the bot's message ids → channel
}

type channelState struct {
	botLastSpoke time.Time
	recent       []decision.ContextLine
	// Voice.
	engagement   decision.Engagement
	speechEnds   time.Time
	participants []decision.Participant
}

func newRunner(o Options) *runner {
	eo := decision.EngineOptions{Classifier: o.Classifier, Logger: o.Logger, Metrics: o.Metrics}
	return &runner{
		opts:     o,
		text:     decision.NewTextEngine(o.Text, eo),
		voice:    decision.NewVoiceEngine(o.Voice, eo),
		stats:    newStats(),
		bot:      o.Text.BotName,
		channels: make(map[string]*channelState),
		selfMsgs: make(map[string]string),
	}
}

func (r *runner) channel(id string) *channelState {
	c := r.channels[id]
	if c == nil {
		c = &channelState{}
		r.channels[id] = c
	}
	return c
}

func (c *channelState) remember(l decision.ContextLine) {
	if len(c.recent) == recentLines {
		copy(c.recent, c.recent[1:])
		c.recent = c.recent[:recentLines-1]
	}
	c.recent = append(c.recent, l)
}

// handle replays one message or voice event; ok is false for a bot switch,
// which changes the names for the events after it and has no result.
func (r *runner) handle(ctx context.Context, ev Event) (res Result, ok bool) {
	var d decision.Decision
	switch ev.Type {
	case TypeBot:
		r.opts.Text.BotName, r.opts.Text.Aliases = ev.Name, ev.Aliases
		r.opts.Voice.BotName, r.opts.Voice.Aliases = ev.Name, ev.Aliases
		r.text.SetPolicy(r.opts.Text)
		r.voice.SetPolicy(r.opts.Voice)
		r.bot = ev.Name
		return Result{}, false
	case TypeVoice:
		res, d = r.handleVoice(ctx, ev)
	default:
		res, d = r.handleText(ctx, ev)
	}
	if r.opts.Score != nil && ev.Addressed != nil {
		r.opts.Score.Add(ev, r.bot, d)
	}
	return res, true
}

func (r *runner) handleText(ctx context.Context, ev Event) (Result, decision.Decision) {
	c := r.channel(ev.ChannelID)
	turn := decision.TextTurn{
		MessageID: ev.ID, ChannelID: ev.ChannelID, GuildID: ev.GuildID, BotNickname: ev.BotNickname,
		AuthorID: ev.AuthorID, AuthorName: ev.AuthorName,
		Content: ev.Content, IsSelf: ev.IsSelf, IsBot: ev.IsBot, MentionsBot: ev.MentionsBot,
		At: ev.TS, Now: ev.TS, BotLastSpokeAt: c.botLastSpoke, Recent: c.recent,
	}
	if ev.ReplyTo != nil {
		ch, ok := r.selfMsgs[*ev.ReplyTo]
		turn.ReplyToBot = ok && ch == ev.ChannelID
	}
	d := r.text.Decide(ctx, &turn)
	res := result(ev.ID, d)
	if d.Allowed() && r.opts.Generator != nil {
		sd := r.stageB(ctx, &res, d, decision.PipelineText, r.text.Nickname(ev.GuildID, ev.BotNickname), ev.AuthorName, c.recent, ev.Content)
		r.textOutcome(ctx, &res, ev, d, sd)
	}
	if ev.IsSelf {
		c.botLastSpoke = ev.TS
		r.selfMsgs[ev.ID] = ev.ChannelID
	}
	c.remember(decision.ContextLine{Speaker: ev.AuthorName, Text: ev.Content, Bot: ev.IsSelf})
	r.stats.add(ev.ChannelID, "text", d)
	return res, d
}

func (r *runner) handleVoice(ctx context.Context, ev Event) (Result, decision.Decision) {
	c := r.channel(ev.ChannelID)
	end := ev.TS.Add(time.Duration(ev.DurationMS) * time.Millisecond)
	c.addParticipant(ev.SpeakerID, ev.SpeakerName)
	g := c.engagement
	g.BotSpeaking = !c.speechEnds.IsZero() && end.Before(c.speechEnds)
	if g.BotSpeaking {
		g.BotSpeechEndsAt = c.speechEnds
	}
	turn := decision.VoiceTurn{
		ID: ev.ID, ChannelID: ev.ChannelID, GuildID: ev.GuildID, BotNickname: ev.BotNickname,
		SpeakerID: ev.SpeakerID, SpeakerName: ev.SpeakerName,
		Transcript: ev.Transcript, Duration: time.Duration(ev.DurationMS) * time.Millisecond, At: end,
		Participants: c.participants, Timeline: c.recent, Engagement: g,
	}
	d := r.voice.Decide(ctx, &turn)
	res := result(ev.ID, d)
	c.remember(decision.ContextLine{Speaker: ev.SpeakerName, Text: ev.Transcript})
	replied := d.Allowed()
	if replied && r.opts.Generator != nil {
		r.stageB(ctx, &res, d, decision.PipelineVoice, r.voice.Nickname(ev.GuildID, ev.BotNickname), ev.SpeakerName,
			c.recent[:len(c.recent)-1], ev.Transcript)
		replied = res.Skipped != nil && !*res.Skipped
		if replied {
			c.remember(decision.ContextLine{Text: res.Reply, Bot: true})
		}
	}
	c.engagement.Observe(d, &turn)
	if replied {
		c.speechEnds = end.Add(r.opts.VoiceReplyDuration)
		c.engagement.BotReplied(ev.SpeakerID, c.speechEnds)
	}
	r.stats.add(ev.ChannelID, "voice", d)
	return res, d
}

func (c *channelState) addParticipant(id, name string) {
	for i := range c.participants {
		if c.participants[i].ID == id {
			if name != "" {
				c.participants[i].Name = name
			}
			return
		}
	}
	c.participants = append(c.participants, decision.Participant{ID: id, Name: name})
}

// stageB asks the generator for a reply and applies Stage B to it. nick is the name the bot
// answers to in the turn's guild ("" none), named in the prompt as the live prompts name it. A
// text skip is counted, not logged: the turn's reply_skipped line (textOutcome) carries it, as
// in the live pipeline.
func (r *runner) stageB(ctx context.Context, res *Result, d decision.Decision, p decision.Pipeline, nick, who string,
	recent []decision.ContextLine, latest string) decision.Decision {
	name := r.opts.Text.BotName
	where := "a Discord text channel"
	if p == decision.PipelineVoice {
		name, where = r.opts.Voice.BotName, "a Discord voice channel (your reply will be spoken)"
	}
	system := fmt.Sprintf("You are %s, a friendly companion in %s. Keep replies short.\n", name, where)
	if nick != "" {
		system += fmt.Sprintf("In this server you are called %q: people may address you by that name.\n", nick)
	}
	system += decision.Guidance(d, who)
	var b strings.Builder
	if len(recent) > 0 {
		b.WriteString("Recent conversation, oldest first:\n")
		for _, l := range recent {
			speaker := l.Speaker
			if l.Bot {
				speaker = name + " (you)"
			}
			fmt.Fprintf(&b, "[%s] %s\n", speaker, l.Text)
		}
	}
	fmt.Fprintf(&b, "Latest, from %s: %s", who, latest)
	raw, err := r.opts.Generator.Generate(ctx, system, b.String())
	if err != nil {
		res.Error = fmt.Sprintf("stage B: %v", err)
		return decision.Decision{}
	}
	cleaned, sd := decision.ReplyDecision(p, raw, d.Force)
	sd.TurnID, sd.ChannelID, sd.UserID = d.TurnID, d.ChannelID, d.UserID
	sd = sd.Following(d)
	rec := &decision.Recorder{Logger: r.opts.Logger, Metrics: r.opts.Metrics}
	skipped := sd.Skipped()
	if skipped && p == decision.PipelineText {
		rec.Count(sd)
	} else {
		rec.Record(ctx, sd)
	}
	res.Skipped, res.Reply = &skipped, cleaned
	if skipped {
		res.SkipReason = sd.Reason.String()
	}
	return sd
}
