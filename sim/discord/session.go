package discordsim

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// session is a gateway session: it outlives connections so that Resume
// can replay what a client missed.
type session struct {
	id      string
	user    UserID
	intents Intents
	// shard and shardCount are the Identify's shard field: the session receives the events of
	// the guilds with (guild_id >> 22) % shardCount == shard, and DMs only on shard 0.
	shard, shardCount int
	conn              *gwConn // nil while no connection is attached
	seq               int64
	replay            []sentEvent // the last replayLimit dispatches, in order
	invalid           bool
}

type sentEvent struct {
	seq     int64
	payload []byte
}

// dispatchToLocked sends one dispatch to a session if it has the intent
// (0 means always). The event is numbered and kept for replay even when no
// connection is attached. s.mu must be held.
func (s *Server) dispatchToLocked(ss *session, t string, d any, intent Intents) {
	if ss.invalid || (intent != 0 && ss.intents&intent == 0) {
		return
	}
	ss.seq++
	b, err := encodeDispatch(ss.seq, t, d)
	if err != nil {
		s.log.Error("discordsim: dispatch", "event", t, "err", err)
		return
	}
	ss.replay = append(ss.replay, sentEvent{ss.seq, b})
	if n := len(ss.replay) - s.cfg.replayLimit; n > 0 {
		ss.replay = slices.Delete(ss.replay, 0, n)
	}
	if ss.conn != nil {
		ss.conn.sendLocked(b)
	}
}

func intentForChannel(c *channel) Intents {
	if c != nil && c.typ == ChannelDM {
		return IntentDirectMessages
	}
	return IntentGuildMessages
}

// dispatchMessageLocked sends MESSAGE_CREATE or MESSAGE_UPDATE to every
// session whose user can see the channel, blanking content, embeds,
// attachments and components for sessions without MESSAGE_CONTENT unless
// the message is theirs or mentions them.
// https://discord.com/developers/docs/events/gateway#message-content-intent
func (s *Server) dispatchMessageLocked(t string, m *message) {
	full := s.wireMessageLocked(m, 0)
	intent := intentForChannel(s.channels[m.ChannelID])
	for _, ss := range s.sessions {
		if !s.seesGuildLocked(ss, m.GuildID) {
			continue
		}
		w := full
		if ss.intents&IntentMessageContent == 0 && m.Author != ss.user && !m.MentionsUser(ss.user) {
			w.Content = ""
			w.Embeds, w.Attachments, w.Components = []json.RawMessage{}, []json.RawMessage{}, []json.RawMessage{}
		}
		s.dispatchToLocked(ss, t, w, intent)
	}
}

// GatewayEventKind classifies what happened on the gateway.
type GatewayEventKind int

// Gateway event kinds, recorded in order for tests.
const (
	GatewayUnknown             GatewayEventKind = iota
	GatewayConnected                            // a socket was opened and got Hello
	GatewayIdentified                           // Identify accepted, READY sent
	GatewayResumed                              // Resume accepted, replay and RESUMED sent
	GatewayResumeRefused                        // Resume refused with Invalid Session
	GatewayHeartbeat                            // a heartbeat arrived (ACK sent or withheld)
	GatewayTimedOut                             // no heartbeat in time; the server closed
	GatewayVoiceState                           // op 4 arrived
	GatewayDisconnected                         // the socket closed, for any reason
	GatewayIdentifyRateLimited                  // an Identify came too soon for its rate-limit key: Invalid Session
)

// String names the kind.
func (k GatewayEventKind) String() string {
	switch k {
	case GatewayConnected:
		return "connected"
	case GatewayIdentified:
		return "identified"
	case GatewayResumed:
		return "resumed"
	case GatewayResumeRefused:
		return "resume-refused"
	case GatewayHeartbeat:
		return "heartbeat"
	case GatewayTimedOut:
		return "timed-out"
	case GatewayVoiceState:
		return "voice-state"
	case GatewayDisconnected:
		return "disconnected"
	case GatewayIdentifyRateLimited:
		return "identify-rate-limited"
	}
	return fmt.Sprintf("GatewayEventKind(%d)", int(k))
}

// GatewayEvent is one recorded gateway happening.
type GatewayEvent struct {
	Kind        GatewayEventKind
	Conn        int    // connection number, from 1
	User        UserID // "" before Identify/Resume
	Session     string
	Intents     Intents
	Compression string    // "", "payload" (compress:true) or "zlib-stream"
	Seq         int64     // Resume: the client's seq; Heartbeat: d
	Replayed    int       // Resume: dispatches replayed
	ACKed       bool      // Heartbeat: whether op 11 was sent
	CloseCode   CloseCode // Disconnected/TimedOut: the close code, if known
	// Shard and ShardCount are the Identify's shard (Identified, IdentifyRateLimited).
	Shard, ShardCount int
	// WrongShard: a voice state update sent on a shard that does not own its guild (ignored).
	WrongShard bool
}

func (s *Server) recordLocked(e GatewayEvent) {
	s.gwEvents = append(s.gwEvents, e)
	s.notifyLocked()
}

// GatewayEvents returns every recorded gateway event, in order.
func (s *Server) GatewayEvents() []GatewayEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.gwEvents)
}

// WaitGateway waits until the n-th (from 1) recorded gateway event of the
// given kind, counted from the start, and returns it.
func (s *Server) WaitGateway(ctx context.Context, kind GatewayEventKind, n int) (GatewayEvent, error) {
	var found GatewayEvent
	err := s.waitFor(ctx, func() bool {
		seen := 0
		for _, e := range s.gwEvents {
			if e.Kind == kind {
				if seen++; seen == n {
					found = e
					return true
				}
			}
		}
		return false
	})
	return found, err
}

// CountGateway returns how many gateway events of kind were recorded.
func (s *Server) CountGateway(kind GatewayEventKind) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.gwEvents {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// WaitReady waits until a session of user u is identified or resumed and
// has a connection attached.
func (s *Server) WaitReady(ctx context.Context, u UserID) error {
	return s.waitFor(ctx, func() bool {
		for _, ss := range s.sessions {
			if ss.user == u && ss.conn != nil && !ss.invalid {
				return true
			}
		}
		return false
	})
}

// seesGuildLocked reports whether a session receives a guild's events: its user is a member
// and the guild is on the session's shard.
// https://discord.com/developers/docs/events/gateway#sharding
func (s *Server) seesGuildLocked(ss *session, g GuildID) bool {
	return s.isMemberLocked(g, ss.user) && ss.ownsGuild(g)
}

// ownsGuild reports whether a guild (or, for "", the DMs) is on the session's shard.
func (ss *session) ownsGuild(g GuildID) bool {
	if ss.shardCount <= 1 {
		return true
	}
	if g == "" {
		return ss.shard == 0
	}
	id, err := strconv.ParseUint(string(g), 10, 64)
	return err == nil && int((id>>22)%uint64(ss.shardCount)) == ss.shard
}
