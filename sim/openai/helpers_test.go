package openaisim

import (
	"errors"

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
