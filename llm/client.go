package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// Op names a Client operation in metrics, logs and errors.
type Op uint8

// Operations.
const (
	OpUnknown Op = iota
	OpGenerate
	OpStream
	OpClassify
	OpTranscribe
	OpSpeak
	OpEmbed
)

var opNames = [...]string{
	OpUnknown:    "unknown",
	OpGenerate:   "generate",
	OpStream:     "stream",
	OpClassify:   "classify",
	OpTranscribe: "transcribe",
	OpSpeak:      "speak",
	OpEmbed:      "embed",
}

// String returns the op's label, e.g. "generate".
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// API selects the generation endpoint. Some OpenAI-compatible servers only
// offer chat completions.
type API uint8

// APIs. The zero value means APIResponses when used in Options.
const (
	APIUnknown API = iota
	APIResponses
	APIChatCompletions
)

// String returns the config spelling: "responses" or "chat_completions".
func (a API) String() string {
	switch a {
	case APIResponses:
		return "responses"
	case APIChatCompletions:
		return "chat_completions"
	}
	return "unknown"
}

// ParseAPI parses the config spelling of an API ("responses",
// "chat_completions"; "" means responses).
func ParseAPI(s string) (API, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "responses":
		return APIResponses, nil
	case "chat_completions", "chat":
		return APIChatCompletions, nil
	}
	return APIUnknown, fmt.Errorf("llm: unknown api %q (allowed: responses, chat_completions)", s)
}

// Defaults applied by New for zero Options fields.
const (
	DefaultBaseURL          = "https://api.openai.com/v1"
	DefaultTimeout          = 60 * time.Second
	DefaultFirstByteTimeout = 20 * time.Second
	DefaultIdleTimeout      = 30 * time.Second
	DefaultMaxRetries       = 2
	DefaultMaxRetryDelay    = 20 * time.Second
	// DefaultClassifierMaxTokens is generous for a one-word answer because reasoning models
	// (the default classifier is gpt-5-nano) count their reasoning tokens against the cap: with
	// a cap of a few tokens they end "incomplete" with no text, and the classifier fails closed.
	DefaultClassifierMaxTokens = 1024
)

// Options configure a Client. Only APIKey is needed against OpenAI itself;
// BaseURL points the client at any OpenAI-compatible server (or the
// simulator). Ambient OPENAI_* environment variables are NOT read here: the
// caller maps its configuration onto these fields.
type Options struct {
	// BaseURL is the API root including /v1, e.g. "https://api.openai.com/v1".
	BaseURL string
	APIKey  string
	// API selects responses (default) or chat_completions for Generate,
	// Stream and Classify.
	API API
	// HTTPClient is used for every request; nil means a fresh client on a
	// clone of http.DefaultTransport. Its Timeout should be 0: the
	// timeouts below are per attempt and stream-aware.
	HTTPClient *http.Client
	// Timeout bounds one attempt of a non-streaming call.
	Timeout time.Duration
	// FirstByteTimeout bounds a streaming call (Stream, Speak) until its first
	// event or byte; IdleTimeout bounds each later gap.
	FirstByteTimeout time.Duration
	IdleTimeout      time.Duration
	// MaxRetries is the number of retries after the first attempt for
	// retryable failures (429, 5xx, timeouts, network, truncated bodies).
	// Used as given (llm.maxRetries maps straight onto it): 0 means a
	// single attempt, as does a negative value. DefaultMaxRetries is the
	// recommended value.
	MaxRetries int
	// MaxRetryDelay caps the wait before a retry. A server asking (via
	// retry-after) for a longer wait is not retried: the error comes back
	// at once with RetryAfter set.
	MaxRetryDelay time.Duration
	// ClassifierMaxTokens is the output budget of Classify.
	ClassifierMaxTokens int
	// Budget, when set, paces every HTTP attempt (the provider's requests-per-minute budget,
	// shared by every process on one Postgres store); nil sends without one.
	Budget Budget
	// BudgetWait bounds the wait for a budget slot; a request that would wait longer fails
	// with ErrorKindOverBudget. 0 means DefaultBudgetWait.
	BudgetWait time.Duration
	Logger     *slog.Logger
	Metrics    *Metrics
	// Meter counts the usage and cost of every answer, charged to the Account of the call's
	// context (WithAccount); nil counts nothing.
	Meter *Meter
	// OmitStreamUsage sends streamed chat completions without stream_options include_usage
	// (servers that reject the field); their usage is then not counted.
	OmitStreamUsage bool
	// Gate, when set, admits every call before it is sent (the spending budgets): it may
	// swap the model or refuse the call (ErrorKindSpendCap). nil admits everything.
	Gate Gate
	// Now is the clock for latency measurements; nil means time.Now.
	Now func() time.Time
}

// Client calls the OpenAI API (or a compatible server) through openai-go v3.
// It is safe for concurrent use.
type Client struct {
	opts      Options
	log       *slog.Logger
	metrics   *Metrics
	now       func() time.Time
	responses responses.ResponseService
	chat      openai.ChatService
	audio     openai.AudioService
	embed     openai.EmbeddingService
}

// New returns a Client for opts, with defaults filled in.
func New(opts Options) (*Client, error) {
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(opts.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: base url %q: want http(s)://host[/path]", opts.BaseURL)
	}
	if opts.API == APIUnknown {
		opts.API = APIResponses
	}
	if opts.API != APIResponses && opts.API != APIChatCompletions {
		return nil, fmt.Errorf("llm: api %d unknown", opts.API)
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.FirstByteTimeout <= 0 {
		opts.FirstByteTimeout = DefaultFirstByteTimeout
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	opts.MaxRetries = max(opts.MaxRetries, 0)
	if opts.MaxRetryDelay <= 0 {
		opts.MaxRetryDelay = DefaultMaxRetryDelay
	}
	if opts.ClassifierMaxTokens <= 0 {
		opts.ClassifierMaxTokens = DefaultClassifierMaxTokens
	}
	if opts.BudgetWait <= 0 {
		opts.BudgetWait = DefaultBudgetWait
	}
	c := &Client{opts: opts, log: opts.Logger, metrics: opts.Metrics, now: opts.Now}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	// Services are built directly (not via openai.NewClient) so that no
	// ambient OPENAI_* environment leaks in; retries are ours (see call).
	ro := []option.RequestOption{
		option.WithBaseURL(opts.BaseURL),
		option.WithAPIKey(opts.APIKey),
		option.WithHTTPClient(opts.HTTPClient),
		option.WithMaxRetries(0),
	}
	c.responses = responses.NewResponseService(ro...)
	c.chat = openai.NewChatService(ro...)
	c.audio = openai.NewAudioService(ro...)
	c.embed = openai.NewEmbeddingService(ro...)
	return c, nil
}

// API returns the generation API in use.
func (c *Client) API() API { return c.opts.API }

// attempt records what one HTTP attempt saw, for classification: pass
// a.options() to the SDK call.
type attempt struct {
	resp    *http.Response
	mu      sync.Mutex // guards bodyErr (read by the SDK's goroutine-free reader, but be safe)
	bodyErr error
}

func (a *attempt) options() []option.RequestOption {
	return []option.RequestOption{option.WithResponseInto(&a.resp), option.WithMiddleware(a.track)}
}

// track wraps the response body to remember a failed read (as opposed to a
// body that was read whole and then failed to decode).
func (a *attempt) track(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if res != nil && res.Body != nil {
		res.Body = &trackedBody{ReadCloser: res.Body, a: a}
	}
	return res, err
}

func (a *attempt) readErr() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bodyErr
}

type trackedBody struct {
	io.ReadCloser
	a *attempt
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.a.mu.Lock()
		if b.a.bodyErr == nil {
			b.a.bodyErr = err
		}
		b.a.mu.Unlock()
	}
	return n, err
}

// attemptFunc performs one HTTP attempt, passing a.options() to the SDK.
type attemptFunc func(ctx context.Context, a *attempt) error

// call runs attempt with the retry policy. timeout > 0 bounds each attempt
// with a context deadline that is released when attempt returns; streaming
// attempts pass 0 and bound themselves. It returns the number of attempts.
func (c *Client) call(ctx context.Context, op Op, model string, timeout time.Duration, run attemptFunc) (int, error) {
	for n := 1; ; n++ {
		if e := c.reserve(ctx, op, model); e != nil {
			e.Attempts = n - 1
			return n - 1, e
		}
		var a attempt
		actx, cancel := ctx, context.CancelFunc(func() {})
		if timeout > 0 {
			actx, cancel = context.WithTimeoutCause(ctx, timeout, errTimeout)
		}
		err := run(actx, &a)
		if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errTimeout) {
			err = fmt.Errorf("%w (%s): %w", errTimeout, timeout, err)
		}
		cancel()
		if err == nil {
			return n, nil
		}
		status := 0
		var header http.Header
		if a.resp != nil {
			status, header = a.resp.StatusCode, a.resp.Header
		}
		e := classify(ctx, op, model, status, header, err, a.readErr())
		e.Attempts = n
		if !e.Retryable || n > c.opts.MaxRetries || ctx.Err() != nil {
			return n, e
		}
		delay := e.RetryAfter
		if delay > c.opts.MaxRetryDelay {
			return n, e // the server wants more than we are willing to wait
		}
		if delay <= 0 {
			delay = backoff(n, c.opts.MaxRetryDelay)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < delay {
			return n, e // the caller's budget ends before the retry could start
		}
		c.metrics.observeRetry(op, model, e.Kind)
		c.log.LogAttrs(ctx, slog.LevelWarn, "llm_retry",
			slog.String("op", op.String()), slog.String("model", model),
			slog.Int("attempt", n), slog.String("kind", e.Kind.String()),
			slog.Int("status", e.Status), slog.Duration("delay", delay))
		if err := sleep(ctx, delay); err != nil {
			e.Kind, e.Retryable = ErrorKindCanceled, false
			e.Err = fmt.Errorf("%w (waiting to retry after %v)", err, e.Err)
			return n, e
		}
	}
}

// backoff is 250 ms doubling per attempt with 25 % jitter, capped at max.
func backoff(attempt int, max time.Duration) time.Duration {
	d := 250 * time.Millisecond << min(attempt-1, 10)
	if d > max {
		d = max
	}
	return d - time.Duration(rand.Int64N(int64(d/4)+1))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
