// Package simtest holds the test helpers of the Discord simulator (package
// discordsim): Serve, which starts one for a test with the request
// conformance check on, and the waits tests use to observe it. Only tests
// import it, so the production binary, which embeds the simulator for
// `banter sim` and `banter sandbox`, does not link the testing package
// (TestBinaryDoesNotLinkTesting checks it).
//
// Every wait blocks on the simulator's changes (Server.Await), never on a
// sleep, until its condition holds or ctx ends.
package simtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/sim/conform"
	discordsim "github.com/banterbot/banter/sim/discord"
)

// Serve starts a Discord simulator on a loopback ephemeral port and closes
// it when the test ends. It fails the test if the simulator cannot start.
//
// Every REST request the simulator receives is checked against Discord's
// official OpenAPI spec (package conform): at cleanup, after the simulator
// has closed, each request off the spec fails the test. A test that sends
// off-spec requests on purpose passes discordsim.WithoutConformance().
// Benchmarks (a *testing.B) run without the check: they measure, and the
// check's CPU would be counted in what they measure.
func Serve(t testing.TB, opts ...discordsim.Option) *discordsim.Server {
	t.Helper()
	v := &Violations{}
	if _, bench := t.(*testing.B); !bench {
		spec, err := conform.Discord()
		if err != nil {
			t.Fatalf("simtest: %v", err)
		}
		opts = append([]discordsim.Option{discordsim.WithConformance(spec, v.Add)}, opts...)
	}
	s := discordsim.New(opts...)
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("discordsim: start: %v", err)
	}
	t.Cleanup(func() {
		_ = s.Close()
		for _, err := range v.All() {
			t.Errorf("discordsim: a request off Discord's API spec: %v", err)
		}
	})
	return s
}

// Violations collects conformance violations (for WithConformance).
type Violations struct {
	mu   sync.Mutex
	errs []error
}

// Add records one violation; it is safe for concurrent use.
func (v *Violations) Add(err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.errs = append(v.errs, err)
}

// All returns the violations so far.
func (v *Violations) All() []error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]error(nil), v.errs...)
}

// From matches messages authored by u (for WaitMessage).
func From(u discordsim.UserID) func(discordsim.Message) bool {
	return func(m discordsim.Message) bool { return m.Author == u }
}

// InChannel matches messages in channel c (for WaitMessage).
func InChannel(c discordsim.ChannelID) func(discordsim.Message) bool {
	return func(m discordsim.Message) bool { return m.ChannelID == c }
}

// WaitMessage waits until a message created by a client (Sent, not Post)
// satisfies match, scanning from the first such message, and returns it.
func WaitMessage(ctx context.Context, s *discordsim.Server, match func(discordsim.Message) bool) (discordsim.Message, error) {
	ms, err := WaitMessages(ctx, s, 1, match)
	if err != nil {
		return discordsim.Message{}, err
	}
	return ms[0], nil
}

// WaitMessages waits until n messages created by clients (Sent) satisfy
// match and returns the first n of them, in order. WaitMessages(ctx, s, 2,
// From(bot)) is "the bot's second message".
func WaitMessages(ctx context.Context, s *discordsim.Server, n int, match func(discordsim.Message) bool) ([]discordsim.Message, error) {
	var found []discordsim.Message
	next := 0
	err := s.Await(ctx, func() bool {
		for _, m := range s.SentSince(next) {
			next++
			if len(found) < n && match(m) {
				found = append(found, m)
			}
		}
		return len(found) >= n
	})
	return found, err
}

// WaitTyping waits for a typing event in channel c by user u.
func WaitTyping(ctx context.Context, s *discordsim.Server, c discordsim.ChannelID, u discordsim.UserID) (discordsim.TypingEvent, error) {
	var found discordsim.TypingEvent
	err := s.Await(ctx, func() bool {
		for _, t := range s.Typing() {
			if t.Channel == c && t.User == u {
				found = t
				return true
			}
		}
		return false
	})
	return found, err
}

// WaitGateway waits until the n-th (from 1) recorded gateway event of the
// given kind, counted from the start, and returns it.
func WaitGateway(ctx context.Context, s *discordsim.Server, kind discordsim.GatewayEventKind, n int) (discordsim.GatewayEvent, error) {
	var found discordsim.GatewayEvent
	err := s.Await(ctx, func() bool {
		seen := 0
		for _, e := range s.GatewayEvents() {
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

// WaitReady waits until a session of user u is identified or resumed and
// has a connection attached.
func WaitReady(ctx context.Context, s *discordsim.Server, u discordsim.UserID) error {
	return s.Await(ctx, func() bool { return s.Connected(u) })
}

// WaitInteractionResponse waits for the bot's callback to interaction id.
func WaitInteractionResponse(ctx context.Context, s *discordsim.Server, id discordsim.InteractionID) (discordsim.InteractionResponse, error) {
	var r discordsim.InteractionResponse
	err := s.Await(ctx, func() bool {
		var ok bool
		r, ok = s.InteractionResponse(id)
		return ok
	})
	return r, err
}

// WaitHeartbeat waits (up to a minute, a failure guard) until the bot's
// current gateway connection, the last one that identified or resumed, has
// sent a heartbeat. Inject a gateway fault only after it: discordgo (v0.29)
// starts a connection's heartbeat goroutine after READY or RESUMED, and a
// goroutine that has not sent its first heartbeat when the connection is
// closed writes on the closed socket and then closes the session, which by
// then is the next connection (a spurious second disconnect that a test
// sees as "no connected gateway session"). Once the first heartbeat is
// out, the goroutine waits on the connection's own close and ends with it.
func WaitHeartbeat(t testing.TB, s *discordsim.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		events := s.GatewayEvents()
		conn, beats := 0, 0
		for _, e := range events {
			switch {
			case e.User != s.BotID():
			case e.Kind == discordsim.GatewayIdentified || e.Kind == discordsim.GatewayResumed:
				conn = e.Conn
			}
			if e.Kind == discordsim.GatewayHeartbeat {
				beats++
			}
		}
		for _, e := range events {
			if conn != 0 && e.Kind == discordsim.GatewayHeartbeat && e.Conn == conn {
				return
			}
		}
		if _, err := WaitGateway(ctx, s, discordsim.GatewayHeartbeat, beats+1); err != nil {
			t.Fatalf("discordsim: no heartbeat on the bot's gateway connection %d: %v", conn, err)
		}
	}
}
