// Package logbuf is a log sink for tests: an io.Writer that a logger (log/slog, a child
// process's output) writes while the test reads, with the few queries tests make of JSON log
// lines. It holds everything written, so a test reads the whole log at any point.
package logbuf

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
)

// Buffer collects what is written to it; it is safe for concurrent use. The zero value is an
// empty buffer ready to use.
type Buffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	echo    io.Writer
	changed chan struct{} // closed at the next write; nil until Changed asks
}

// Echo makes the buffer also copy every write to w (a test's stderr when it runs verbose),
// and returns the buffer.
func (b *Buffer) Echo(w io.Writer) *Buffer {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.echo = w
	return b
}

// Write appends p. It never fails; an echo's error is ignored.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.echo != nil {
		_, _ = b.echo.Write(p)
	}
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	return b.buf.Write(p)
}

// Changed returns a channel closed at the next write, so that a test waits on what is
// logged rather than on the clock: take the channel, check the log, then wait on it.
func (b *Buffer) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	return b.changed
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Len returns how many bytes were written so far: an offset for Since.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

// Since returns what was written after the first off bytes (copying only that).
func (b *Buffer) Since(off int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	all := b.buf.Bytes()
	if off < 0 || off > len(all) {
		off = len(all)
	}
	return string(all[off:])
}

// Count returns how many non-empty lines contain every one of subs.
func (b *Buffer) Count(subs ...string) int {
	n := 0
	for _, line := range strings.Split(b.String(), "\n") {
		if line != "" && containsAll(line, subs) {
			n++
		}
	}
	return n
}

// Events returns the JSON records whose "msg" is name, in the order written. Lines that are
// not JSON objects are skipped.
func (b *Buffer) Events(name string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(b.String(), "\n") {
		if !strings.Contains(line, name) {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == name {
			out = append(out, m)
		}
	}
	return out
}

func containsAll(line string, subs []string) bool {
	for _, s := range subs {
		if !strings.Contains(line, s) {
			return false
		}
	}
	return true
}
