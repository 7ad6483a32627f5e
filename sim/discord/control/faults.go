package control

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/voicesim"
)

// gatewayFault is POST /faults/gateway {"fault": ..., "resumable": bool,
// "n": int, "code": int}, on the bot's gateway connection.
func (c *Controller) gatewayFault(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Fault     string `json:"fault"`
		Resumable bool   `json:"resumable"`
		N         int    `json:"n"`
		Code      int    `json:"code"`
	}
	if !decode(w, r, &in) {
		return
	}
	var err error
	switch in.Fault {
	case "reconnect":
		err = c.sim.ForceReconnect()
	case "invalid_session":
		err = c.sim.ForceInvalidSession(in.Resumable)
	case "drop":
		err = c.sim.DropGateway()
	case "withhold_acks":
		err = c.sim.WithholdACKs(max(in.N, 1))
	case "request_heartbeat":
		err = c.sim.RequestHeartbeat()
	case "close":
		if in.Code < 1000 || in.Code > 4999 {
			fail(w, http.StatusBadRequest, fmt.Errorf(`"code" %d: want a WebSocket close code (1000-4999, e.g. 4000 unknown error: resumable)`, in.Code))
			return
		}
		err = c.sim.CloseGateway(discordsim.CloseCode(in.Code))
	default:
		fail(w, http.StatusBadRequest, fmt.Errorf(`"fault" %q: allowed values are reconnect (op 7), invalid_session (op 9), drop, withhold_acks, request_heartbeat (op 1), close (with "code")`, in.Fault))
		return
	}
	if err != nil {
		fail(w, http.StatusConflict, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// maxFaults bounds "n" of a REST fault (how many calls fail).
const maxFaults = 10000

// restFault is POST /faults/rest {"route": "POST /channels/{channel_id}/messages"
// ("" any), "n": 1, "status": 500, "after_commit": false} or {"status": 429,
// "retry_after_ms": 1500, "global": false}: the next n calls of the route
// fail so; with after_commit they take effect first and lose their answer.
// {"fault": "cut_before_effect" | "cut_after_effect" | "hang_before_effect"}
// (no status) ends them without any answer instead.
func (c *Controller) restFault(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Route        string `json:"route"`
		N            int    `json:"n"`
		Status       int    `json:"status"`
		RetryAfterMs int64  `json:"retry_after_ms"`
		Global       bool   `json:"global"`
		AfterCommit  bool   `json:"after_commit"`
		Fault        string `json:"fault"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.N > maxFaults {
		// The simulator queues one fault per call: a huge n would take the
		// process's memory.
		fail(w, http.StatusBadRequest, fmt.Errorf(`"n" %d: at most %d`, in.N, maxFaults))
		return
	}
	n := max(in.N, 1)
	route := discordsim.Route(in.Route)
	if in.Fault != "" {
		if err := c.restCut(route, n, in.Fault, in.Status != 0 || in.AfterCommit); err != nil {
			fail(w, http.StatusBadRequest, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if in.Status < 400 || in.Status > 599 {
		fail(w, http.StatusBadRequest, fmt.Errorf(`"status" %d: want an HTTP error status (400-599), or a "fault" (%s)`, in.Status, restCutNames))
		return
	}
	switch {
	case in.AfterCommit && in.Status == http.StatusTooManyRequests:
		fail(w, http.StatusBadRequest, errors.New(`"after_commit" is for 5xx answers: a 429 never takes effect`))
		return
	case in.AfterCommit:
		c.sim.FailNextAfterCommit(route, n, in.Status)
	case in.Status == http.StatusTooManyRequests:
		c.sim.RateLimitNext(route, n, time.Duration(max(in.RetryAfterMs, 1))*time.Millisecond, in.Global)
	default:
		c.sim.FailNext(route, n, in.Status)
	}
	w.WriteHeader(http.StatusNoContent)
}

const restCutNames = "cut_before_effect, cut_after_effect, hang_before_effect"

// restCut injects a REST fault that leaves the next n calls of route without an answer.
// withStatus reports a "status" or "after_commit" given too, which such a fault has no use for.
func (c *Controller) restCut(route discordsim.Route, n int, fault string, withStatus bool) error {
	inject := map[string]func(discordsim.Route, int){
		discordsim.CutBeforeEffect.String():  c.sim.CutNext,
		discordsim.CutAfterEffect.String():   c.sim.CutNextAfterEffect,
		discordsim.HangBeforeEffect.String(): c.sim.HangNext,
	}[fault]
	switch {
	case inject == nil:
		return fmt.Errorf(`"fault" %q: allowed values are %s (or leave it out and give a "status")`, fault, restCutNames)
	case withStatus:
		return fmt.Errorf(`"fault" %q sends no answer: leave out "status" and "after_commit"`, fault)
	}
	inject(route, n)
	return nil
}

type latencyView struct {
	RESTMs        int64  `json:"rest_ms"`
	Route         string `json:"route,omitempty"`
	GatewayMs     int64  `json:"gateway_ms"`
	DelayedFrames int    `json:"gateway_delayed_frames"`
}

// latency is GET /faults/latency: the gateway latency and how many frames
// carried it.
func (c *Controller) latency(w http.ResponseWriter, _ *http.Request) {
	d, n := c.sim.GatewayLatency()
	reply(w, http.StatusOK, latencyView{GatewayMs: d.Milliseconds(), DelayedFrames: n})
}

// setLatency is POST /faults/latency {"rest_ms", "route", "gateway_ms"}:
// REST answers of the route ("" every route) wait rest_ms, gateway frames
// gateway_ms; 0 removes. Fields left out are left as they are.
func (c *Controller) setLatency(w http.ResponseWriter, r *http.Request) {
	var in struct {
		RESTMs    *int64 `json:"rest_ms"`
		Route     string `json:"route"`
		GatewayMs *int64 `json:"gateway_ms"`
	}
	if !decode(w, r, &in) {
		return
	}
	for name, v := range map[string]*int64{"rest_ms": in.RESTMs, "gateway_ms": in.GatewayMs} {
		if v != nil && (*v < 0 || *v > 60_000) {
			fail(w, http.StatusBadRequest, fmt.Errorf(`%q %d: want 0 to 60000 milliseconds`, name, *v))
			return
		}
	}
	if in.RESTMs != nil {
		c.sim.SetRESTLatency(discordsim.Route(in.Route), time.Duration(*in.RESTMs)*time.Millisecond)
	}
	if in.GatewayMs != nil {
		c.sim.SetGatewayLatency(time.Duration(*in.GatewayMs) * time.Millisecond)
	}
	d, n := c.sim.GatewayLatency()
	v := latencyView{GatewayMs: d.Milliseconds(), DelayedFrames: n, Route: in.Route}
	if in.RESTMs != nil {
		v.RESTMs = *in.RESTMs
	}
	reply(w, http.StatusOK, v)
}

var errNoVoiceServer = errors.New("this simulator has no voice server")

// voiceFault is POST /faults/voice {"as": NAME or "bot", "fault": ...} on
// the member's voice connection: close (with "code"; resumable codes keep
// the session), drop (TCP cut), udp (impairments with "direction",
// "loss_percent", "reorder_percent", "duplicate_percent", "garbage_percent",
// "delay_ms", "jitter_ms", "seed"; all zero clears) or corrupt_welcome (the next DAVE Welcome in
// "channel", default the member's voice channel).
func (c *Controller) voiceFault(w http.ResponseWriter, r *http.Request) {
	var in struct {
		As        string  `json:"as"`
		Fault     string  `json:"fault"`
		Code      int     `json:"code"`
		Channel   string  `json:"channel"`
		Direction string  `json:"direction"`
		Loss      float64 `json:"loss_percent"`
		Reorder   float64 `json:"reorder_percent"`
		Duplicate float64 `json:"duplicate_percent"`
		Garbage   float64 `json:"garbage_percent"`
		DelayMs   int     `json:"delay_ms"`
		JitterMs  int     `json:"jitter_ms"`
		Seed      uint64  `json:"seed"`
	}
	if !decode(w, r, &in) {
		return
	}
	vs := c.sim.VoiceSim()
	if vs == nil {
		fail(w, http.StatusConflict, errNoVoiceServer)
		return
	}
	u, err := c.user(in.As)
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	switch in.Fault {
	case "close":
		if in.Code < 1000 || in.Code > 4999 {
			fail(w, http.StatusBadRequest, fmt.Errorf(`"code" %d: want a WebSocket close code (1000-4999, e.g. 4006 session no longer valid, 4015 resumable)`, in.Code))
			return
		}
		err = vs.CloseVoice(string(u), in.Code)
	case "drop":
		err = vs.DropVoice(string(u))
	case "udp":
		dir := map[string]voicesim.Direction{"to_server": voicesim.ToServer, "from_server": voicesim.FromServer}[in.Direction]
		if dir == voicesim.DirectionUnknown {
			fail(w, http.StatusBadRequest, fmt.Errorf(`"direction" %q: allowed values are to_server, from_server`, in.Direction))
			return
		}
		if in.DelayMs < 0 || in.JitterMs < 0 || in.DelayMs > 10000 || in.JitterMs > 10000 {
			fail(w, http.StatusBadRequest, fmt.Errorf(`"delay_ms" %d, "jitter_ms" %d: want 0 to 10000`, in.DelayMs, in.JitterMs))
			return
		}
		vs.SetFaults(string(u), dir, voicesim.Faults{LossPercent: in.Loss, ReorderPercent: in.Reorder,
			DuplicatePercent: in.Duplicate, GarbagePercent: in.Garbage, Seed: in.Seed,
			Delay: time.Duration(in.DelayMs) * time.Millisecond, Jitter: time.Duration(in.JitterMs) * time.Millisecond})
	case "corrupt_welcome":
		ch, cerr := c.voiceChannelOf(u, in.Channel)
		if cerr != nil {
			fail(w, http.StatusBadRequest, cerr)
			return
		}
		vs.CorruptNextWelcome(string(c.guild), string(ch), string(u))
	default:
		fail(w, http.StatusBadRequest, fmt.Errorf(`"fault" %q: allowed values are close (with "code"), drop, udp, corrupt_welcome`, in.Fault))
		return
	}
	if err != nil {
		fail(w, http.StatusConflict, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// voiceChannelOf is the channel named, or else u's voice channel.
func (c *Controller) voiceChannelOf(u discordsim.UserID, name string) (discordsim.ChannelID, error) {
	if name != "" {
		return c.channel(name)
	}
	if st, ok := c.sim.VoiceStateOf(c.guild, u); ok {
		return st.Channel, nil
	}
	return "", errors.New(`"channel" is required when the member is not in voice`)
}
