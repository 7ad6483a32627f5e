package control

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

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
}

type gatewayView struct {
	Kind    string            `json:"kind"`
	Conn    int               `json:"conn"`
	User    discordsim.UserID `json:"user_id,omitempty"`
	Session string            `json:"session,omitempty"`
	Seq     int64             `json:"seq,omitempty"`
	ACKed   bool              `json:"acked,omitempty"`
	Close   int               `json:"close_code,omitempty"`
}

// requests is GET /requests: every REST call and gateway event recorded.
func (c *Controller) requests(w http.ResponseWriter, _ *http.Request) {
	rest := []restView{}
	for _, q := range c.sim.RESTLog() {
		rest = append(rest, restView{q.Method, q.Path, string(q.Route), q.User, q.Status, q.Query, jsonRaw(q.Body),
			q.Files, q.Delay.Milliseconds()})
	}
	gw := []gatewayView{}
	for _, e := range c.sim.GatewayEvents() {
		gw = append(gw, gatewayView{e.Kind.String(), e.Conn, e.User, e.Session, e.Seq, e.ACKed, int(e.CloseCode)})
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
