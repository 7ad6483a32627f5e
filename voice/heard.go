package voice

import (
	"context"
	"time"

	"github.com/banterbot/banter/discord/bots"
)

// hearMode is how the hearing clock treats a speaker's frames.
type hearMode uint8

const (
	// heard: decoded and endpointed by the speaker's Listener; the speaker's utterances
	// become turns, and they may barge in.
	heard hearMode = iota
	// blockedUser: permissions.blockedUserIds lists the member. The frames are taken and
	// dropped undecoded; each talk spurt is counted as a dropped utterance.
	blockedUser
	// unheardBot: a bot that voice.hearBots and voice.hearBotIds leave unheard (a music bot).
	// The frames are taken, counted and dropped undecoded.
	unheardBot
)

// String is the mode's reason label (banter_voice_packets_ignored_total, voice_speaker_ignored).
func (m hearMode) String() string {
	switch m {
	case blockedUser:
		return DropBlockedUser.String()
	case unheardBot:
		return "bot"
	}
	return "heard"
}

// lookupTimeout bounds a speaker's REST lookup (discord/bots).
const lookupTimeout = 10 * time.Second

// modeNow is the speaker's mode under the configuration in force and what is known of the
// user. A user the gateway state did not know when the stream started is heard as a member
// until the state or the speaker's REST lookup (lookUp) says otherwise; the clock looks again
// at every tick meanwhile (a map lookup under the state's read lock). Once known, the kind
// stays: the bot flag of an account does not change.
func (sp *speaker) modeNow() hearMode {
	s := sp.s
	if s.blocked(sp.userID) {
		return blockedUser
	}
	if sp.kind == bots.Unknown {
		if sp.kind = bots.Kind(sp.resolved.Load()); sp.kind == bots.Unknown {
			sp.kind = s.svc.bots.Kind(s.guildID, sp.userID)
		}
	}
	if sp.kind == bots.Bot && !s.svc.cfg().Voice.HearsBot(sp.userID) {
		return unheardBot
	}
	return heard
}

// setMode switches the speaker to m at the start of a tick (the hearing clock). Leaving heard
// ends the utterance in progress unheard: a speculation on it is cancelled, and handle drops
// what the Listener's flush hands it (nothing of it is transcribed). Entering heard makes the
// Listener the first time: a speaker not heard from the start never had one. It reports false
// when the Listener cannot be made.
func (sp *speaker) setMode(m hearMode) bool {
	if sp.mode == heard {
		sp.cancelSpec("not_heard")
		sp.mode = m // handle drops the flushed utterance
		sp.l.Flush()
	}
	sp.mode, sp.spurt, sp.quiet, sp.announced = m, false, 0, false
	sp.active.Store(false)
	if m == heard && sp.l == nil {
		return sp.listen() == nil
	}
	return true
}

// ignore accounts for the n frames a speaker who is not heard sent this tick (end: its stream
// ended). A bot's are counted and its first ones logged (voice_speaker_ignored, once each time
// it stops being heard). A blocked member's are counted too, and its talk spurts followed: a
// run of packets followed by voice.endpointing.silenceMs without any (or the stream's end) is
// one utterance dropped, as the endpointer would have cut it.
func (sp *speaker) ignore(n int, end bool) {
	s := sp.s
	if sp.mode == heard {
		return
	}
	if n > 0 {
		s.metrics.ignored(sp.mode, n)
		if !sp.announced {
			sp.announced = true
			s.logger().Info("voice_speaker_ignored", "user_id", sp.userID, "reason", sp.mode.String())
		}
	}
	if sp.mode != blockedUser {
		return
	}
	if n > 0 {
		sp.spurt, sp.quiet = true, 0
		return
	}
	if !sp.spurt {
		return
	}
	if sp.quiet++; sp.quiet >= sp.endTicks || end {
		sp.spurt = false
		s.droppedBlocked(sp.userID)
	}
}

// lookUp asks REST whether a speaker the gateway state did not know is a bot (discord/bots:
// GET /guilds/{guild}/members/{user}, once, shared with any other lookup of the user), on a
// goroutine of the session. The answer reaches the hearing clock through resolved; a failure
// is logged, and the speaker stays heard as a member unless the gateway state learns better
// (a VOICE_STATE_UPDATE carries the member).
func (sp *speaker) lookUp() {
	s := sp.s
	ctx, cancel := context.WithTimeout(s.ctx, lookupTimeout)
	defer cancel()
	k, err := s.svc.bots.Resolve(ctx, s.guildID, sp.userID)
	if err != nil {
		if s.ctx.Err() == nil {
			s.logger().Warn("voice_speaker_lookup_failed", "user_id", sp.userID, "error", err.Error(), "heard_as", bots.Person.String())
		}
		return
	}
	sp.resolved.Store(uint32(k))
	s.logger().Debug("voice_speaker_looked_up", "user_id", sp.userID, "kind", k.String())
}
