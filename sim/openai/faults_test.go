package openaisim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

func respParams() responses.ResponseNewParams {
	return responses.ResponseNewParams{Model: "gpt-5-mini", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}}
}

// TestFaultsHTTPStatus: each status fault comes back as openai-go's
// *openai.Error with OpenAI's error JSON and, for 429/503, retry-after.
func TestFaultsHTTPStatus(t *testing.T) {
	tests := []struct {
		name      string
		fault     Fault
		wantType  string
		wantRetry string
	}{
		{name: "429 default retry-after", fault: Fault{Status: 429}, wantType: "requests", wantRetry: "1"},
		{name: "429 custom retry-after", fault: Fault{Status: 429, RetryAfter: 2500 * time.Millisecond}, wantType: "requests", wantRetry: "2.5"},
		{name: "500", fault: Fault{Status: 500}, wantType: "server_error"},
		{name: "503", fault: Fault{Status: 503, RetryAfter: time.Second}, wantType: "server_error", wantRetry: "1"},
		{name: "401 message", fault: Fault{Status: 401, Message: "nope"}, wantType: "invalid_request_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointResponses}, Fault: tt.fault}))
			c := newClient(s)
			_, err := c.Responses.New(context.Background(), respParams())
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v", err)
			}
			if apiErr.StatusCode != tt.fault.Status || apiErr.Type != tt.wantType || apiErr.Message == "" {
				t.Errorf("error %d %q %q", apiErr.StatusCode, apiErr.Type, apiErr.Message)
			}
			if tt.fault.Message != "" && apiErr.Message != tt.fault.Message {
				t.Errorf("message %q", apiErr.Message)
			}
			if got := apiErr.Response.Header.Get("Retry-After"); got != tt.wantRetry {
				t.Errorf("retry-after %q, want %q", got, tt.wantRetry)
			}
			if r := s.Requests(); len(r) != 1 || r[0].Status != tt.fault.Status || r[0].Fault != tt.fault {
				t.Errorf("recorded %+v", r)
			}
		})
	}
}

// TestFaultRetryRecovers: openai-go's own retry honours retry-after-ms and
// succeeds once a Times:1 fault is spent.
func TestFaultRetryRecovers(t *testing.T) {
	s := serve(t, WithRules(Rule{Fault: Fault{Status: 429, RetryAfter: 20 * time.Millisecond}, Times: 1}))
	c := newClient(s, option.WithMaxRetries(2))
	resp, err := c.Responses.New(context.Background(), respParams())
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != "You said: hi" {
		t.Errorf("text %q", resp.OutputText())
	}
	if r := s.Requests(); len(r) != 2 || r[0].Status != 429 || r[1].Status != 200 {
		t.Errorf("recorded %+v", r)
	}
}

func TestFaultTimeout(t *testing.T) {
	s := serve(t, WithRules(Rule{Fault: Fault{Timeout: true}}))
	c := newClient(s)
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Millisecond)
	defer cancel()
	_, err := c.Responses.New(ctx, respParams())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer wcancel()
	r, err := s.WaitRequests(wctx, 1)
	if err != nil || r[0].Status != 0 || !r[0].Fault.Timeout {
		t.Errorf("recorded %+v, %v", r, err)
	}
}

// TestFaultTimeoutEndsOnClose: a hanging request does not keep Close waiting.
func TestFaultTimeoutEndsOnClose(t *testing.T) {
	s, err := Start("127.0.0.1:0", WithRules(Rule{Fault: Fault{Timeout: true}}))
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(s)
	errc := make(chan error, 1)
	go func() { _, err := c.Responses.New(context.Background(), respParams()); errc <- err }()
	if _, err := s.WaitRequestsStarted(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err == nil {
		t.Error("request succeeded after Close")
	}
}

func TestFaultStreams(t *testing.T) {
	tests := []struct {
		name  string
		fault Fault
	}{
		{name: "truncated", fault: Fault{TruncateAfterEvents: 4}},
		{name: "malformed event", fault: Fault{MalformedJSON: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/responses", func(t *testing.T) {
			s := serve(t, WithRules(Rule{Reply: Reply{Text: "a b c d e f g"}, Fault: tt.fault}))
			c := newClient(s)
			st := c.Responses.NewStreaming(context.Background(), respParams())
			n, completed := 0, false
			for st.Next() {
				n++
				completed = completed || st.Current().Type == "response.completed"
			}
			if st.Err() == nil || completed {
				t.Errorf("after %d events: err %v completed %v", n, st.Err(), completed)
			}
			if tt.fault.TruncateAfterEvents > 0 && n != tt.fault.TruncateAfterEvents {
				t.Errorf("got %d events before truncation, want %d", n, tt.fault.TruncateAfterEvents)
			}
		})
		t.Run(tt.name+"/chat", func(t *testing.T) {
			s := serve(t, WithRules(Rule{Reply: Reply{Text: "a b c d e f g"}, Fault: tt.fault}))
			c := newClient(s)
			st := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
				Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}})
			for st.Next() {
			}
			if st.Err() == nil {
				t.Error("stream ended cleanly")
			}
		})
		t.Run(tt.name+"/body", func(t *testing.T) {
			s := serve(t, WithRules(Rule{Fault: tt.fault}))
			c := newClient(s)
			_, err := c.Responses.New(context.Background(), respParams())
			if err == nil {
				t.Fatal("no error")
			}
			var apiErr *openai.Error
			if errors.As(err, &apiErr) {
				t.Errorf("got an API error %v, want a transport/decode error", err)
			}
		})
	}
}

func TestFaultSpeechTruncated(t *testing.T) {
	s := serve(t, WithRules(Rule{Match: Match{Endpoint: EndpointSpeech}, Fault: Fault{TruncateAfterEvents: 2}}))
	c := newClient(s)
	res, err := c.Audio.Speech.New(context.Background(), openai.AudioSpeechNewParams{
		Model: "tts-1", Input: strings.Repeat("long text ", 20), ResponseFormat: "pcm",
		Voice: openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String("alloy")}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err == nil || len(b) != 2*speechChunk {
		t.Errorf("read %d bytes, err %v", len(b), err)
	}
}

func TestNotFoundAndAuth(t *testing.T) {
	s := serve(t, WithAPIKey("sk-right"))
	for _, key := range []string{"sk-wrong", "sk-right"} {
		c := newClient(s, option.WithAPIKey(key))
		_, err := c.Models.List(context.Background())
		var apiErr *openai.Error
		if key == "sk-wrong" {
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Code != "invalid_api_key" {
				t.Errorf("wrong key: %v", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("right key: %v", err)
		}
	}
	req, _ := http.NewRequest("POST", s.BaseURL()+"/nope", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer sk-right")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct{ Error APIError }
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != 404 || !strings.Contains(body.Error.Message, "Invalid URL (POST /v1/nope)") {
		t.Errorf("404: %d %+v %v", res.StatusCode, body, err)
	}
}

func TestModels(t *testing.T) {
	s := serve(t, WithModels("gpt-5-mini", "gpt-realtime"))
	c := newClient(s)
	page, err := c.Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 2 || page.Data[1].ID != "gpt-realtime" || page.Data[0].Object != "model" {
		t.Errorf("models = %+v", page.Data)
	}
	m, err := c.Models.Get(context.Background(), "gpt-5-mini")
	if err != nil || m.ID != "gpt-5-mini" {
		t.Errorf("get = %+v %v", m, err)
	}
	_, err = c.Models.Get(context.Background(), "gpt-9")
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "model_not_found" {
		t.Errorf("missing model: %v", err)
	}
}

func TestFaultStreamStall(t *testing.T) {
	s := serve(t, WithRules(Rule{Reply: Reply{Text: "a b c d e f g"}, Fault: Fault{StallAfterEvents: 5}}))
	c := newClient(s)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	st := c.Responses.NewStreaming(ctx, respParams())
	n := 0
	for st.Next() {
		n++
	}
	if n != 5 || !errors.Is(st.Err(), context.DeadlineExceeded) {
		t.Errorf("%d events, err %v; want 5 then a client timeout", n, st.Err())
	}
}

func TestFaultInStreamError(t *testing.T) {
	fault := Fault{StreamErrorAfterEvents: 4, Message: "model overloaded mid-stream"}
	t.Run("responses", func(t *testing.T) {
		s := serve(t, WithRules(Rule{Reply: Reply{Text: "a b c d e f"}, Fault: fault}))
		c := newClient(s)
		st := c.Responses.NewStreaming(context.Background(), respParams())
		var got []string
		var errMsg, failedStatus string
		for st.Next() {
			ev := st.Current()
			got = append(got, ev.Type)
			switch ev.Type {
			case "error":
				errMsg = ev.Message
			case "response.failed":
				failedStatus = string(ev.Response.Status)
			}
		}
		if st.Err() != nil || len(got) != 6 || got[4] != "error" || errMsg != fault.Message || failedStatus != "failed" {
			t.Errorf("events %v, error %q, failed %q, err %v", got, errMsg, failedStatus, st.Err())
		}
	})
	t.Run("chat", func(t *testing.T) {
		s := serve(t, WithRules(Rule{Reply: Reply{Text: "a b c d e f"}, Fault: fault}))
		c := newClient(s)
		st := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
			Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}})
		n := 0
		for st.Next() {
			n++
		}
		if n != 4 || st.Err() == nil || !strings.Contains(st.Err().Error(), fault.Message) {
			t.Errorf("%d chunks, err %v", n, st.Err())
		}
	})
}
