package control

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	discordsim "github.com/banterbot/banter/sim/discord"
)

type restView struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Route   string            `json:"route"`
	User    discordsim.UserID `json:"user_id"`
	Status  int               `json:"status"`
	Query   string            `json:"query,omitempty"`
	Body    jsonRaw           `json:"body,omitempty"`
	Files   []string          `json:"files,omitempty"`
	DelayMs int64             `json:"delay_ms,omitempty"`
	// Fault names a fault that left the request without an answer (status 0).
	Fault string `json:"fault,omitempty"`
	// ReceivedAt and AnsweredAt are RFC 3339 with milliseconds; AnsweredAt is left out when
	// the request got no answer (cut or hung).
	ReceivedAt string `json:"received_at"`
	AnsweredAt string `json:"answered_at,omitempty"`
}

// rfc3339Milli is RFC 3339 with milliseconds, as /requests writes times.
const rfc3339Milli = "2006-01-02T15:04:05.000Z07:00"

// stamp formats t as rfc3339Milli, "" for the zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(rfc3339Milli)
}

type gatewayView struct {
	Kind    string            `json:"kind"`
	Conn    int               `json:"conn"`
	User    discordsim.UserID `json:"user_id,omitempty"`
	Session string            `json:"session,omitempty"`
	Seq     int64             `json:"seq,omitempty"`
	ACKed   bool              `json:"acked,omitempty"`
	Close   int               `json:"close_code,omitempty"`
	At      string            `json:"at"` // RFC 3339 with milliseconds
}

// requests is GET /requests: every REST call and gateway event recorded.
func (c *Controller) requests(w http.ResponseWriter, _ *http.Request) {
	rest := []restView{}
	for _, q := range c.sim.RESTLog() {
		rest = append(rest, restView{q.Method, q.Path, string(q.Route), q.User, q.Status, q.Query, jsonRaw(q.Body),
			q.Files, q.Delay.Milliseconds(), q.Fault.String(), stamp(q.Received), stamp(q.Answered)})
	}
	gw := []gatewayView{}
	for _, e := range c.sim.GatewayEvents() {
		gw = append(gw, gatewayView{e.Kind.String(), e.Conn, e.User, e.Session, e.Seq, e.ACKed, int(e.CloseCode), stamp(e.At)})
	}
	reply(w, http.StatusOK, struct {
		REST    []restView    `json:"rest"`
		Gateway []gatewayView `json:"gateway"`
	}{rest, gw})
}

// jsonRaw is a JSON body that marshals as null when empty.
type jsonRaw []byte

func (j jsonRaw) MarshalJSON() ([]byte, error) {
	if len(j) == 0 {
		return []byte("null"), nil
	}
	return j, nil
}

// cmpSnowflake orders decimal snowflakes numerically.
func cmpSnowflake(a, b string) int {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	if errA != nil || errB != nil {
		return strings.Compare(a, b)
	}
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func snowflakeAfter(id, after string) bool { return cmpSnowflake(id, after) > 0 }

func sortBy[T any](s []T, key func(T) string) {
	slices.SortFunc(s, func(a, b T) int { return strings.Compare(key(a), key(b)) })
}
