package llm

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{"fractional", http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{"ms wins", http.Header{"Retry-After-Ms": {"150"}, "Retry-After": {"1"}}, 150 * time.Millisecond},
		{"bad ms falls back", http.Header{"Retry-After-Ms": {"x"}, "Retry-After": {"3"}}, 3 * time.Second},
		{"http date", http.Header{"Retry-After": {now.Add(4 * time.Second).Format(http.TimeFormat)}}, 4 * time.Second},
		{"past date", http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0},
		{"negative", http.Header{"Retry-After": {"-1"}}, 0},
		{"huge", http.Header{"Retry-After": {"1e300"}}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseRetryAfter(tt.h, now); got != tt.want {
				t.Errorf("parseRetryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClassifyError(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	bg := context.Background()
	tests := []struct {
		name      string
		ctx       context.Context
		status    int
		err       error
		kind      ErrorKind
		retryable bool
		bodyErr   error
	}{
		{"429", bg, 429, &openai.Error{StatusCode: 429, Code: "rate_limit_exceeded"}, ErrorKindRateLimited, true, nil},
		{"quota", bg, 429, &openai.Error{StatusCode: 429, Code: "insufficient_quota"}, ErrorKindAuth, false, nil},
		{"500", bg, 500, &openai.Error{StatusCode: 500}, ErrorKindServer, true, nil},
		{"503", bg, 503, &openai.Error{StatusCode: 503}, ErrorKindServer, true, nil},
		{"401", bg, 401, &openai.Error{StatusCode: 401}, ErrorKindAuth, false, nil},
		{"400", bg, 400, &openai.Error{StatusCode: 400}, ErrorKindBadRequest, false, nil},
		{"timeout", bg, 0, fmt.Errorf("%w: %w", errTimeout, context.DeadlineExceeded), ErrorKindTimeout, true, nil},
		{"truncated body", bg, 200, io.ErrUnexpectedEOF, ErrorKindTruncated, true, io.ErrUnexpectedEOF},
		{"incomplete json", bg, 200, io.ErrUnexpectedEOF, ErrorKindMalformed, false, nil},
		{"truncated no response", bg, 0, io.ErrUnexpectedEOF, ErrorKindTruncated, true, nil},
		{"stream truncated", bg, 200, errTruncated, ErrorKindTruncated, true, nil},
		{"malformed", bg, 200, errors.New("invalid character 'x'"), ErrorKindMalformed, false, nil},
		{"network", bg, 0, errors.New("dial tcp: connection refused"), ErrorKindNetwork, true, nil},
		{"canceled", canceled, 0, context.Canceled, ErrorKindCanceled, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := classify(tt.ctx, OpGenerate, "m", tt.status, nil, tt.err, tt.bodyErr)
			if e.Kind != tt.kind || e.Retryable != tt.retryable {
				t.Errorf("kind=%v retryable=%v, want %v %v", e.Kind, e.Retryable, tt.kind, tt.retryable)
			}
			var got *APIError
			if !errors.As(fmt.Errorf("wrapped: %w", e), &got) || got != e {
				t.Error("errors.As through a wrap failed")
			}
			if !errors.Is(e, tt.err) {
				t.Error("APIError does not unwrap to its cause")
			}
		})
	}
}

// wavBytes builds a PCM WAV header + data of n bytes.
func wavBytes(rate, channels, bits, n int) []byte {
	b := make([]byte, 44+n)
	copy(b[0:], "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+n))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], uint16(channels))
	binary.LittleEndian.PutUint32(b[24:], uint32(rate))
	binary.LittleEndian.PutUint32(b[28:], uint32(rate*channels*bits/8))
	binary.LittleEndian.PutUint16(b[32:], uint16(channels*bits/8))
	binary.LittleEndian.PutUint16(b[34:], uint16(bits))
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(n))
	return b
}

func TestParseWAVHeader(t *testing.T) {
	oneSec := wavBytes(16000, 1, 16, 32000)
	withList := append([]byte{}, oneSec[:36]...)
	withList = append(withList, "LIST\x03\x00\x00\x00abc\x00"...) // odd size, padded
	withList = append(withList, oneSec[36:]...)
	streaming := wavBytes(24000, 1, 16, 4800)
	binary.LittleEndian.PutUint32(streaming[40:], 0xFFFFFFFF)
	tests := []struct {
		name    string
		b       []byte
		dur     time.Duration
		wantErr bool
	}{
		{"1s mono 16k", oneSec, time.Second, false},
		{"stereo 48k 250ms", wavBytes(48000, 2, 16, 48000), 250 * time.Millisecond, false},
		{"extra chunk", withList, time.Second, false},
		{"streaming size", streaming, 100 * time.Millisecond, false},
		{"empty data", wavBytes(16000, 1, 16, 0), 0, false},
		{"not riff", []byte("OggS...."), 0, true},
		{"short", oneSec[:20], 0, true},
		{"no data", oneSec[:36], 0, true},
		{"zero rate", wavBytes(0, 1, 16, 10), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := ParseWAVHeader(tt.b)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && w.Duration() != tt.dur {
				t.Errorf("duration = %v, want %v", w.Duration(), tt.dur)
			}
		})
	}
}

func FuzzParseWAVHeader(f *testing.F) {
	f.Add(wavBytes(16000, 1, 16, 320))
	f.Add(wavBytes(48000, 2, 16, 0))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEdata\xff\xff\xff\xff"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEfmt \xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := ParseWAVHeader(b)
		if err != nil {
			return
		}
		if w.DataBytes < 0 || w.DataBytes > len(b) || w.Duration() < 0 {
			t.Fatalf("inconsistent %+v for %d bytes", w, len(b))
		}
	})
}
