package dave

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/banterbot/banter/discord/dave/wire"
	"github.com/banterbot/banter/internal/logbuf"
	"github.com/prometheus/client_golang/prometheus"
)

// fakeClock is a settable clock for the session's timeouts.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// timedMember is a Go member with a fake clock, metrics and a log.
func timedMember(t *testing.T, uid uint64) (*goMember, *fakeClock, *prometheus.Registry, *logbuf.Buffer) {
	t.Helper()
	clock := &fakeClock{now: time.Unix(1000, 0)}
	reg := prometheus.NewRegistry()
	logs := &logbuf.Buffer{}
	s := NewSession(Config{UserID: uid, ChannelID: testChannel, Now: clock.Now, Metrics: NewMetrics(reg),
		Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	return &goMember{uid: uid, s: s}, clock, reg, logs
}

// TestTransitionTimeoutExecutes: a member that said ready (op 23) for a
// commit and never gets op 22 keeps sending with the old epoch's key, which
// the member the commit welcomed cannot decrypt. After TransitionTimeout,
// Expire executes the transition: everyone decrypts it again; the timeout is
// logged and counted.
func TestTransitionTimeoutExecutes(t *testing.T) {
	g := newGateway(t, testChannel)
	a, clock, reg, logs := timedMember(t, 1)
	b, c := newGoMember(2, testChannel), newGoMember(3, testChannel)
	g.connect(a)
	g.connect(b)
	g.create()
	if _, ok := a.s.NextExpiry(); ok {
		t.Fatal("a waits for something in an established group")
	}
	g.connect(c)
	payload, _ := g.propose([]uint64{3}, nil)
	senders, commits := g.broadcastProposals(g.recipients(3), payload)
	w, cw := g.pick(senders, commits)
	ann := g.accept(w, cw)
	for _, u := range ann.CommitTo {
		if out := g.deliver(g.member(u), wire.OpMLSAnnounceCommitTransition, ann.Commit, true); !hasOp(out, wire.OpTransitionReady) {
			t.Fatalf("%d answered op 29 with %v", u, out)
		}
	}
	for _, u := range ann.WelcomeTo {
		if out := g.deliver(g.member(u), wire.OpMLSWelcome, ann.Welcome, true); !hasOp(out, wire.OpTransitionReady) {
			t.Fatalf("%d answered op 30 with %v", u, out)
		}
	}
	// op 22 reaches b and c, not a.
	for _, m := range []member{b, c} {
		g.deliver(m, wire.OpExecuteTransition, jsonBytes(wire.ExecuteTransitionEvent{TransitionID: ann.TransitionID}), false)
	}
	if _, err := c.Decrypt(t, 1, a.Encrypt(t, []byte("opus before the timeout"))); err == nil {
		t.Fatal("c decrypted a's old-epoch frame")
	}
	d, ok := a.s.NextExpiry()
	if !ok || d != DefaultTransitionTimeout {
		t.Fatalf("NextExpiry = %v %v, want %v", d, ok, DefaultTransitionTimeout)
	}
	clock.Add(d - time.Millisecond)
	if out := a.s.Expire(); len(out) != 0 || strings.Contains(logs.String(), "dave_transition_timeout") {
		t.Fatalf("expired early: %v\n%s", out, logs.String())
	}
	clock.Add(time.Millisecond)
	if out := a.s.Expire(); len(out) != 0 {
		t.Fatalf("Expire sent %v", out)
	}
	if !strings.Contains(logs.String(), `"msg":"dave_transition_timeout"`) || !strings.Contains(logs.String(), `"action":"execute"`) {
		t.Errorf("timeout not logged:\n%s", logs.String())
	}
	if n := gathered(t, reg, "banter_dave_timeouts_total"); n != 1 {
		t.Errorf("banter_dave_timeouts_total = %v, want 1", n)
	}
	if _, ok := a.s.NextExpiry(); ok {
		t.Error("still waiting after the timeout")
	}
	g.inGroup[3] = true
	g.checkFrames("after the local execute")
	// A late op 22 for the same transition changes nothing.
	g.deliver(a, wire.OpExecuteTransition, jsonBytes(wire.ExecuteTransitionEvent{TransitionID: ann.TransitionID}), false)
	g.checkFrames("after the late op 22")
}

// TestJoinTimeoutRecovers: a member whose key package is never answered with
// a Welcome while others are in the call reports op 31 and sends a new key
// package after JoinTimeout; the gateway adds it from that one. A member
// alone in the call waits without a timeout.
func TestJoinTimeoutRecovers(t *testing.T) {
	g := newGateway(t, testChannel)
	a, b := newGoMember(1, testChannel), newGoMember(2, testChannel)
	c, clock, reg, logs := timedMember(t, 3)
	g.connect(a)
	if _, ok := a.s.NextExpiry(); ok {
		t.Fatal("a sole member waits for a Welcome")
	}
	g.connect(b)
	g.create()
	g.connect(c)
	first := g.kps[3]
	d, ok := c.s.NextExpiry()
	if !ok || d != DefaultJoinTimeout {
		t.Fatalf("NextExpiry = %v %v, want %v", d, ok, DefaultJoinTimeout)
	}
	clock.Add(d)
	out := c.s.Expire()
	if len(out) != 2 || out[0].Op != wire.OpMLSInvalidCommitWelcome || out[1].Op != wire.OpMLSKeyPackage {
		t.Fatalf("Expire = %v, want op 31 and op 26", out)
	}
	if bytes.Equal(out[1].Payload, first) {
		t.Fatal("the same key package again")
	}
	if !strings.Contains(logs.String(), `"msg":"dave_join_timeout"`) {
		t.Errorf("join timeout not logged:\n%s", logs.String())
	}
	if n := gathered(t, reg, "banter_dave_timeouts_total"); n != 1 {
		t.Errorf("banter_dave_timeouts_total = %v, want 1", n)
	}
	if d, ok := c.s.NextExpiry(); !ok || d != DefaultJoinTimeout {
		t.Errorf("after the new key package NextExpiry = %v %v, want a new full wait", d, ok)
	}
	g.kps[3] = out[1].Payload
	if inv := g.add(c); len(inv) != 0 {
		t.Fatalf("%v rejected the add", inv)
	}
	g.checkAuth("joined after the timeout")
	g.checkFrames("joined after the timeout")
	if _, ok := c.s.NextExpiry(); ok {
		t.Error("still waiting after joining")
	}
}

// TestTimeoutsOff: negative timeouts disable both waits.
func TestTimeoutsOff(t *testing.T) {
	g := newGateway(t, testChannel)
	a := newGoMember(1, testChannel)
	c := &goMember{uid: 3, s: NewSession(Config{UserID: 3, ChannelID: testChannel, TransitionTimeout: -1, JoinTimeout: -1})}
	g.connect(a)
	g.connect(c)
	if d, ok := c.s.NextExpiry(); ok {
		t.Fatalf("NextExpiry = %v with timeouts off", d)
	}
}
