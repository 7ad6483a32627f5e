package openaisim

import (
	"errors"
	"testing"

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
