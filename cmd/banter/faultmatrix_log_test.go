package main

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/banterbot/banter/internal/logbuf"
)

// matrixLog is the bot's JSON log, shared by its logger and the fault matrix. Every write wakes
// the matrix's waits, so that they wait on what the bot does, not on the clock.
type matrixLog struct{ logbuf.Buffer }

func newMatrixLog() *matrixLog { return &matrixLog{} }

// since parses the log's JSON lines written after offset off (other lines are skipped).
func (l *matrixLog) since(off int) []logLine {
	s := l.Since(off)
	var out []logLine
	for _, raw := range strings.Split(s, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(raw), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// count is how many lines after offset off have message msg.
func (l *matrixLog) count(off int, msg string) int {
	n := 0
	for _, line := range l.since(off) {
		if line.msg() == msg {
			n++
		}
	}
	return n
}

// wait returns once cond holds (checked after every log write, and every 50 ms for what the
// log does not show, such as simulator state), or false when ctx ends: a failure guard.
func (l *matrixLog) wait(ctx context.Context, cond func() bool) bool {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ch := l.Changed()
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return cond()
		case <-ch:
		case <-tick.C:
		}
	}
}

// logLine is one parsed log line.
type logLine map[string]any

func (l logLine) msg() string { return l.str("msg") }

func (l logLine) str(key string) string {
	s, _ := l[key].(string)
	return s
}

// strs is a string or a list of strings (trigger_ids, turn_ids).
func (l logLine) strs(key string) []string {
	switch v := l[key].(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// guard is a failure guard for one wait of the matrix: generous, since the machine may be
// loaded; it only bounds how long a broken run takes to fail.
func guard(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 90*time.Second)
}
