package voicesim

import "testing"

// serve is voicetest.Serve for this package's own tests (which cannot import
// voicetest: it imports this package).
func serve(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var o Options
	for _, f := range opts {
		f(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatalf("voicesim: start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("voicesim: close: %v", err)
		}
	})
	return s
}
