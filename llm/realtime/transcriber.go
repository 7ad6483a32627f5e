package realtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// IntentTranscription is Config.Intent for a transcription session (?intent=transcription):
// input audio is transcribed as it is committed, with no model responses.
const IntentTranscription = "transcription"

// TranscriptionOptions configure a transcription session.
type TranscriptionOptions struct {
	// Model transcribes each committed span, e.g. "gpt-4o-transcribe".
	Model string
	// Language is an ISO-639-1 hint; empty lets the model detect.
	Language string
	// Prompt biases recognition (the bot's name).
	Prompt string
	// OnUsage, when set, receives the usage of every completed transcription (on the
	// session's reader goroutine; it must not block).
	OnUsage func(TranscriptionUsage)
}

// TranscriptionSessionCommand is session.update for a transcription session: the model, no
// server turn detection (the caller commits), pcm16 at 24 kHz.
type TranscriptionSessionCommand struct{ Options TranscriptionOptions }

// Type implements Command.
func (TranscriptionSessionCommand) Type() string { return "session.update" }

// AppendJSON implements Command.
func (c TranscriptionSessionCommand) AppendJSON(b []byte) []byte {
	type transcription struct {
		Model    string `json:"model"`
		Language string `json:"language,omitempty"`
		Prompt   string `json:"prompt,omitempty"`
	}
	type input struct {
		Format        wireFormat     `json:"format"`
		Transcription transcription  `json:"transcription"`
		TurnDetection *TurnDetection `json:"turn_detection"`
	}
	type session struct {
		Type  string `json:"type"`
		Audio struct {
			Input input `json:"input"`
		} `json:"audio"`
	}
	w := struct {
		Type    string  `json:"type"`
		Session session `json:"session"`
	}{Type: c.Type(), Session: session{Type: "transcription"}}
	o := c.Options
	w.Session.Audio.Input = input{Format: wireFormat{AudioFormatType, SampleRate},
		Transcription: transcription{Model: o.Model, Language: o.Language, Prompt: o.Prompt}}
	return appendMarshal(b, w)
}

// Transcriber is a realtime transcription session: the caller appends a span of speech and
// commits it (Transcribe), and the server transcribes each committed span on its own, while
// the caller goes on. One session serves one stream of speech (a member's utterance): the
// spans are its parts in order, and its transcript is theirs joined. Transcribe may be called
// from several goroutines; spans are committed in call order.
type Transcriber struct {
	conn *Conn
	done chan struct{} // closed when the reader ends

	sendMu sync.Mutex // serialises append+commit so spans commit in call order

	mu      sync.Mutex // guards following
	queued  []*Span    // committed, waiting for input_audio_buffer.committed
	byItem  map[string]*Span
	readErr error
	onUsage func(TranscriptionUsage)
}

// Span is one committed span's transcript to come.
type Span struct {
	done chan struct{}
	text string
	err  error
}

func (s *Span) settle(text string, err error) {
	s.text, s.err = text, err
	close(s.done)
}

// Wait returns the span's transcript, or an error when its transcription failed, the session
// ended first, or ctx is done.
func (s *Span) Wait(ctx context.Context) (string, error) {
	select {
	case <-s.done:
		return s.text, s.err
	case <-ctx.Done():
		return "", fmt.Errorf("realtime: transcription: %w", ctx.Err())
	}
}

// OpenTranscriber dials a transcription session (cfg.Intent is set to IntentTranscription;
// cfg.Model is not sent), configures it with opts and starts reading its events. Close it
// when done.
func OpenTranscriber(ctx context.Context, cfg Config, opts TranscriptionOptions) (*Transcriber, error) {
	if opts.Model == "" {
		return nil, errors.New("realtime: transcription: model is empty")
	}
	cfg.Intent, cfg.Model = IntentTranscription, ""
	c, err := Dial(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("realtime: transcription: %w", err)
	}
	sctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	var ev Event
	err = c.waitFor(sctx, &ev, EventSessionCreated)
	if err == nil {
		err = c.Send(sctx, TranscriptionSessionCommand{Options: opts})
	}
	if err == nil {
		err = c.waitFor(sctx, &ev, EventSessionUpdated)
	}
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("realtime: transcription: set up: %w", err)
	}
	t := &Transcriber{conn: c, done: make(chan struct{}), byItem: map[string]*Span{}, onUsage: opts.OnUsage}
	go t.read()
	return t, nil
}

// Transcribe commits pcm (Commit) and waits for its transcript (Span.Wait).
func (t *Transcriber) Transcribe(ctx context.Context, pcm []byte) (string, error) {
	sp, err := t.Commit(ctx, pcm)
	if err != nil {
		return "", err
	}
	return sp.Wait(ctx)
}

// Commit appends pcm (s16le, 24 kHz, mono; at least 100 ms, the API's minimum commit) and
// commits it as the next span. It returns once the span is sent; its transcript comes later
// (Span.Wait). Spans are committed in the order of Commit calls.
func (t *Transcriber) Commit(ctx context.Context, pcm []byte) (*Span, error) {
	sp := &Span{done: make(chan struct{})}
	if err := t.commit(ctx, pcm, sp); err != nil {
		return nil, err
	}
	return sp, nil
}

// commit appends and commits pcm as the span sp.
func (t *Transcriber) commit(ctx context.Context, pcm []byte, sp *Span) error {
	t.sendMu.Lock()
	defer t.sendMu.Unlock()
	t.mu.Lock()
	if err := t.readErr; err != nil {
		t.mu.Unlock()
		return err
	}
	t.queued = append(t.queued, sp)
	t.mu.Unlock()
	err := t.conn.AppendAudio(ctx, pcm)
	if err == nil {
		err = t.conn.Send(ctx, InputAudioCommitCommand{})
	}
	if err != nil {
		_ = t.conn.Close() // the reader fails every span waiting, this one included
		return fmt.Errorf("realtime: transcription: commit: %w", err)
	}
	return nil
}

// read takes the session's events: each committed item is matched to the span committed
// first, and its transcript (or failure) settles it. When the socket ends, every span still
// waiting fails.
func (t *Transcriber) read() {
	defer close(t.done)
	var ev Event
	ctx := context.Background()
	for {
		err := t.conn.ReadEvent(ctx, &ev)
		if err == nil {
			err = t.take(&ev)
		}
		if err != nil {
			t.fail(fmt.Errorf("realtime: transcription: %w", err))
			return
		}
	}
}

// take handles one event; an error ends the session.
func (t *Transcriber) take(ev *Event) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ev.Type {
	case EventInputAudioCommitted:
		if len(t.queued) == 0 {
			return fmt.Errorf("committed item %s that was not asked for", ev.ItemID)
		}
		if _, dup := t.byItem[ev.ItemID]; dup {
			return fmt.Errorf("item %s committed twice", ev.ItemID)
		}
		t.byItem[ev.ItemID], t.queued = t.queued[0], t.queued[1:]
	case EventInputTranscriptionCompleted, EventInputTranscriptionFailed:
		sp, ok := t.byItem[ev.ItemID]
		if !ok {
			return nil // not ours to wait for (settled by an error before)
		}
		delete(t.byItem, ev.ItemID)
		if ev.Type == EventInputTranscriptionFailed {
			sp.settle("", fmt.Errorf("realtime: transcription of %s failed: %s", ev.ItemID, ev.Error.Message))
		} else {
			sp.settle(ev.Transcript, nil)
			if t.onUsage != nil {
				t.onUsage(ev.TranscriptionUsage)
			}
		}
	case EventError:
		if ev.Error.Code == "input_audio_buffer_commit_empty" && len(t.queued) > 0 {
			t.queued[0].settle("", fmt.Errorf("realtime: transcription: %s", ev.Error.Message))
			t.queued = t.queued[1:]
			return nil
		}
		return &SessionError{Info: ev.Error}
	}
	return nil
}

// fail settles every span still waiting with err and refuses new ones.
func (t *Transcriber) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.readErr = err
	for _, sp := range t.queued {
		sp.settle("", err)
	}
	for _, sp := range t.byItem {
		sp.settle("", err)
	}
	t.queued, t.byItem = nil, map[string]*Span{}
}

// Close closes the session; spans still waiting fail. It waits for the reader to end.
func (t *Transcriber) Close() error {
	err := t.conn.Close()
	<-t.done
	return err
}
