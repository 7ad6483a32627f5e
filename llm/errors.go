package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
)

// ErrorKind classifies a failed call so callers can branch without parsing
// messages. The zero value is ErrorKindUnknown.
type ErrorKind uint8

// Error kinds.
const (
	ErrorKindUnknown ErrorKind = iota
	// ErrorKindRateLimited is HTTP 429 (retry-after in APIError.RetryAfter).
	ErrorKindRateLimited
	// ErrorKindServer is HTTP 5xx, 408, 409, or an error event inside a stream.
	ErrorKindServer
	// ErrorKindTimeout is a per-attempt deadline of the client (not the
	// caller's context) expiring.
	ErrorKindTimeout
	// ErrorKindTruncated is a body or stream that ended before its terminal
	// event or length.
	ErrorKindTruncated
	// ErrorKindMalformed is a 2xx response whose body is not what the API
	// documents (bad JSON, unknown shapes).
	ErrorKindMalformed
	// ErrorKindBadRequest is HTTP 400/404/413/422: repeating will not help.
	ErrorKindBadRequest
	// ErrorKindAuth is HTTP 401/403, or 429 with code insufficient_quota.
	ErrorKindAuth
	// ErrorKindNetwork is a transport failure without an HTTP response
	// (connection refused, reset).
	ErrorKindNetwork
	// ErrorKindCanceled is the caller's context ending (canceled or its own
	// deadline); errors.Is(err, context.Canceled) also holds then.
	ErrorKindCanceled
	// ErrorKindOverBudget is a request the provider's request budget
	// (Options.Budget) could not admit within Options.BudgetWait: it was
	// never sent.
	ErrorKindOverBudget
	// ErrorKindSpendCap is a call the Gate (Options.Gate: the daily spending budgets)
	// refused: it was never sent.
	ErrorKindSpendCap
)

var errorKindNames = [...]string{
	ErrorKindUnknown:     "unknown",
	ErrorKindRateLimited: "rate_limited",
	ErrorKindServer:      "server_error",
	ErrorKindTimeout:     "timeout",
	ErrorKindTruncated:   "truncated",
	ErrorKindMalformed:   "malformed",
	ErrorKindBadRequest:  "bad_request",
	ErrorKindAuth:        "auth",
	ErrorKindNetwork:     "network",
	ErrorKindCanceled:    "canceled",
	ErrorKindOverBudget:  "over_budget",
	ErrorKindSpendCap:    "spend_cap",
}

// String returns the kind's metric/log label, e.g. "rate_limited".
func (k ErrorKind) String() string {
	if int(k) < len(errorKindNames) {
		return errorKindNames[k]
	}
	return "ErrorKind(" + strconv.Itoa(int(k)) + ")"
}

// APIError is the error every Client method returns on failure. It carries
// the classification and what the server said; Unwrap gives the underlying
// cause (an *openai.Error, context.Canceled, an io error, ...).
//
//	var apiErr *llm.APIError
//	if errors.As(err, &apiErr) && apiErr.Retryable { ... }
type APIError struct {
	Op    Op
	Model string
	Kind  ErrorKind
	// Status is the HTTP status code, 0 when there was no HTTP response.
	Status int
	// Code and Message are OpenAI's error.code and error.message, when sent.
	Code    string
	Message string
	// RetryAfter is the server's retry-after (retry-after-ms, retry-after
	// seconds or HTTP date), 0 when absent.
	RetryAfter time.Duration
	// Retryable reports whether repeating the request may succeed. The client
	// has already retried up to Options.MaxRetries where it could.
	Retryable bool
	// Attempts is how many HTTP attempts were made.
	Attempts int
	Err      error
}

// Error implements error. It never includes request bodies or keys.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "llm: %s", e.Op)
	if e.Model != "" {
		fmt.Fprintf(&b, " %s", e.Model)
	}
	fmt.Fprintf(&b, ": %s", e.Kind)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d", e.Status)
		if e.Code != "" {
			fmt.Fprintf(&b, " %s", e.Code)
		}
		b.WriteString(")")
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " retry after %s", e.RetryAfter)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	} else if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *APIError) Unwrap() error { return e.Err }

// Sentinel causes wrapped inside APIError.Err.
var (
	errTruncated = errors.New("stream ended before its terminal event")
	errTimeout   = errors.New("attempt deadline exceeded")
	errEmpty     = errors.New("response has no output")
	errMalformed = errors.New("malformed response")
)

// classify turns any error from an attempt into an *APIError. status is the
// HTTP status seen for the attempt (0 if none); bodyErr is the error reading
// the response body hit, if any (a body that was read whole but did not
// decode is malformed, one that broke off is truncated); ctx is the caller's
// context (not the per-attempt one) so a caller cancel is told apart from our
// own per-attempt deadline.
func classify(ctx context.Context, op Op, model string, status int, header http.Header, err, bodyErr error) *APIError {
	var already *APIError
	if errors.As(err, &already) {
		return already
	}
	e := &APIError{Op: op, Model: model, Status: status, Err: err}
	var oerr *openai.Error
	switch {
	case ctx.Err() != nil:
		e.Kind = ErrorKindCanceled
		if !errors.Is(err, ctx.Err()) {
			e.Err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
	case errors.As(err, &oerr):
		e.Status = oerr.StatusCode
		e.Code = oerr.Code
		e.Message = oerr.Message
		if oerr.Response != nil {
			header = oerr.Response.Header
		}
		e.Kind, e.Retryable = classifyStatus(oerr.StatusCode, oerr.Code)
	case errors.Is(err, errTimeout), errors.Is(err, context.DeadlineExceeded):
		e.Kind, e.Retryable = ErrorKindTimeout, true
	case errors.Is(err, errMalformed):
		e.Kind = ErrorKindMalformed
	case errors.Is(err, errTruncated), bodyErr != nil:
		e.Kind, e.Retryable = ErrorKindTruncated, true
	case status >= 200 && status < 300:
		// The body arrived whole but could not be understood.
		e.Kind = ErrorKindMalformed
	case errors.Is(err, io.ErrUnexpectedEOF):
		e.Kind, e.Retryable = ErrorKindTruncated, true
	case status >= 400:
		e.Kind, e.Retryable = classifyStatus(status, "")
	default:
		e.Kind, e.Retryable = ErrorKindNetwork, true
	}
	if header != nil {
		e.RetryAfter = parseRetryAfter(header, time.Now())
	}
	return e
}

func classifyStatus(status int, code string) (ErrorKind, bool) {
	switch {
	case status == http.StatusTooManyRequests && code == "insufficient_quota":
		return ErrorKindAuth, false
	case status == http.StatusTooManyRequests:
		return ErrorKindRateLimited, true
	case status == http.StatusRequestTimeout, status == http.StatusConflict:
		return ErrorKindServer, true
	case status >= 500:
		return ErrorKindServer, true
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return ErrorKindAuth, false
	case status >= 400:
		return ErrorKindBadRequest, false
	case status >= 200 && status < 300:
		return ErrorKindMalformed, false
	}
	return ErrorKindUnknown, false
}

// parseRetryAfter reads retry-after-ms (OpenAI's) or Retry-After (seconds or
// an HTTP date, RFC 9110 section 10.2.3). Garbage yields 0.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e9 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e6 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
