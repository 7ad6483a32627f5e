package realtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	openaisim "github.com/banterbot/banter/sim/openai"
)

// pcmMs is ms of 24 kHz mono s16le silence.
func pcmMs(ms int) []byte { return make([]byte, SampleRate/1000*ms*2) }

func openTranscriber(t *testing.T, env *rtEnv) *Transcriber {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tr, err := OpenTranscriber(ctx, env.cfg, TranscriptionOptions{Model: "gpt-4o-transcribe", Language: "en", Prompt: "banter"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

// TestTranscriberSpansInOrder: each committed span is transcribed on its own (the simulator
// sees where it starts in the session's audio and how long it is), the spans committed from
// several goroutines each get their own transcript, and the session is one handshake.
func TestTranscriberSpansInOrder(t *testing.T) {
	env := newRTEnv(t, openaisim.Rule{Name: "span",
		Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeTranscription, Model: "gpt-4o-transcribe"},
		Respond: func(r openaisim.Request) openaisim.Reply {
			return openaisim.Reply{Transcript: "from " + r.AudioOffset.String() + " for " + r.Audio.String()}
		},
		Latency: openaisim.Latency{TimeToFirstToken: 30 * time.Millisecond}})
	tr := openTranscriber(t, env)
	ctx := context.Background()
	first, err := tr.Transcribe(ctx, pcmMs(300))
	if err != nil || first != "from 0s for 300ms" {
		t.Fatalf("first span: %q, %v", first, err)
	}
	// Two spans in flight at once, from two goroutines: whichever commits first starts at
	// 300 ms, the other after it; each is settled by its own item.
	var wg sync.WaitGroup
	got := map[int]string{}
	var mu sync.Mutex
	for _, ms := range []int{200, 500} {
		wg.Go(func() {
			text, err := tr.Transcribe(ctx, pcmMs(ms))
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			got[ms] = text
			mu.Unlock()
		})
	}
	wg.Wait()
	a, b := got[200], got[500]
	ok := (a == "from 300ms for 200ms" && b == "from 500ms for 500ms") || (b == "from 300ms for 500ms" && a == "from 800ms for 200ms")
	if !ok {
		t.Errorf("concurrent spans = %v", got)
	}
	if n := len(env.sim.RequestsFor(openaisim.EndpointRealtime)); n != 1 {
		t.Errorf("%d realtime handshakes, want one session", n)
	}
	if n := len(env.sim.RequestsFor(openaisim.EndpointRealtimeTranscription)); n != 3 {
		t.Errorf("%d transcriptions recorded, want 3", n)
	}
}

// TestTranscriberFailures: a failed transcription fails its span only; a dropped socket
// fails every span waiting and the ones after; a refused handshake fails the open.
func TestTranscriberFailures(t *testing.T) {
	env := newRTEnv(t,
		openaisim.Rule{Name: "down", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeTranscription},
			Fault: openaisim.Fault{Status: 500, Message: "transcriber down"}, Times: 1},
		openaisim.Rule{Name: "ok", Match: openaisim.Match{Endpoint: openaisim.EndpointRealtimeTranscription},
			Reply: openaisim.Reply{Transcript: "hello"}})
	tr := openTranscriber(t, env)
	ctx := context.Background()
	if _, err := tr.Transcribe(ctx, pcmMs(200)); err == nil || !strings.Contains(err.Error(), "failed") {
		t.Fatalf("failed span: %v", err)
	}
	if text, err := tr.Transcribe(ctx, pcmMs(200)); err != nil || text != "hello" {
		t.Fatalf("span after a failed one: %q, %v", text, err)
	}
	if _, err := tr.Transcribe(ctx, pcmMs(50)); err == nil {
		t.Error("a span under the API's 100 ms minimum was accepted")
	}
	_ = tr.conn.Close()
	if _, err := tr.Transcribe(ctx, pcmMs(200)); err == nil {
		t.Error("span on a closed session succeeded")
	}

	refused := newRTEnv(t, openaisim.Rule{Match: openaisim.Match{Endpoint: openaisim.EndpointRealtime},
		Fault: openaisim.Fault{Status: 403}})
	if _, err := OpenTranscriber(ctx, refused.cfg, TranscriptionOptions{Model: "gpt-4o-transcribe"}); err == nil {
		t.Error("refused handshake opened")
	}
}

// TestTranscriptionSessionCommand: the session.update a transcription session sends.
func TestTranscriptionSessionCommand(t *testing.T) {
	got := string(TranscriptionSessionCommand{Options: TranscriptionOptions{Model: "gpt-4o-transcribe", Language: "en"}}.AppendJSON(nil))
	want := `{"type":"session.update","session":{"type":"transcription","audio":{"input":{"format":{"type":"audio/pcm","rate":24000},"transcription":{"model":"gpt-4o-transcribe","language":"en"},"turn_detection":null}}}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if u, err := realtimeURL("https://x/v1", "", IntentTranscription); err != nil || u != "wss://x/v1/realtime?intent=transcription" {
		t.Errorf("intent url %q, %v", u, err)
	}
}

// FuzzTranscriberEvents feeds a transcription session's event handling any sequence of server
// events (one per line) with spans waiting: it must not panic, settle a span twice, or leave
// a span unsettled once the session fails.
func FuzzTranscriberEvents(f *testing.F) {
	for _, seed := range []string{
		`{"type":"input_audio_buffer.committed","item_id":"a"}` + "\n" +
			`{"type":"conversation.item.input_audio_transcription.completed","item_id":"a","transcript":"hi"}`,
		`{"type":"input_audio_buffer.committed","item_id":"a"}` + "\n" +
			`{"type":"input_audio_buffer.committed","item_id":"a"}` + "\n" +
			`{"type":"conversation.item.input_audio_transcription.failed","item_id":"a","error":{"message":"x"}}`,
		`{"type":"error","error":{"code":"input_audio_buffer_commit_empty","message":"short"}}`,
		`{"type":"input_audio_buffer.committed","item_id":"b"}` + "\n" + `{"type":"error","error":{"code":"server_error"}}`,
		`{"type":"conversation.item.input_audio_transcription.completed","item_id":"zzz"}`,
	} {
		f.Add(seed, uint8(2))
	}
	f.Fuzz(func(t *testing.T, events string, waiting uint8) {
		tr := &Transcriber{byItem: map[string]*Span{}}
		var spans []*Span
		for range waiting % 8 {
			sp := &Span{done: make(chan struct{})}
			spans = append(spans, sp)
			tr.queued = append(tr.queued, sp)
		}
		var ev Event
		for _, line := range strings.Split(events, "\n") {
			if ev.Decode([]byte(line)) != nil {
				continue
			}
			if err := tr.take(&ev); err != nil {
				tr.fail(err)
				break
			}
		}
		tr.fail(errors.New("session over")) // settles what is left, at most once each
		for i, sp := range spans {
			select {
			case <-sp.done:
			default:
				t.Fatalf("span %d never settled", i)
			}
		}
	})
}
