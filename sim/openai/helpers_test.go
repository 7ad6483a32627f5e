package openaisim

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// newClient returns an openai-go client pointed at s, without retries.
func newClient(s *Server, opts ...option.RequestOption) openai.Client {
	base := []option.RequestOption{
		option.WithBaseURL(s.BaseURL()),
		option.WithAPIKey("sk-sim-test"),
		option.WithMaxRetries(0),
	}
	return openai.NewClient(append(base, opts...)...)
}

// checkNoLeaks fails the test if goroutines running this package's code
// outlive the test (after the simulator's cleanup has run).
func checkNoLeaks(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		deadline := time.Now().Add(2 * time.Second)
		for {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			var leaked []string
			for _, g := range strings.Split(string(buf), "\n\n") {
				if strings.Contains(g, "sim/openai.") && !strings.Contains(g, "checkNoLeaks") &&
					!strings.Contains(g, "testing.tRunner") {
					leaked = append(leaked, g)
				}
			}
			if len(leaked) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("leaked goroutines:\n%s", strings.Join(leaked, "\n\n"))
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// serveT starts a simulator whose cleanup runs before the leak check.
func serveT(t *testing.T, opts ...Option) *Server {
	t.Helper()
	checkNoLeaks(t) // registered first, so it runs after Serve's Close
	return serve(t, opts...)
}

func asOpenAIError(err error, target **openai.Error) bool {
	return errors.As(err, target)
}

// serve is openaitest.Serve for this package's own tests (which cannot
// import openaitest: it imports this package).
func serve(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := Start("127.0.0.1:0", opts...)
	if err != nil {
		t.Fatalf("openaisim: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("openaisim: close: %v", err)
		}
	})
	return s
}
