package voice

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	"github.com/banterbot/banter/llm/realtime"
)

// Span transcription: with voice.speculation.transcription "session", a member's words at each
// pause are not uploaded again from the start of the utterance. When they start talking, a
// realtime transcription session opens on the transcription provider; at each pause the
// speech since the last pause is committed to it as one span, and the words so far are the
// spans' transcripts joined. The end of the utterance commits what is left. One utterance
// costs one session, and each second of speech is sent once, however many pauses it has.
//
//	speech starts      → open the session (while they talk)
//	pause (pauseMs)    → commit the span since the last pause; words so far = spans joined
//	end of utterance   → commit the rest (if any); the transcript = every span joined
//
// A session that cannot be opened, or a span that fails, falls back to an upload of the
// chunk so far (llm.Transcribe): the turn loses time, never words. A provider that refuses
// the session is not asked again for spanRetryAfter.

// SessionTranscriber is what a Model offers for span transcription (llm.Client does); a Model
// without it uploads at every pause.
type SessionTranscriber interface {
	OpenTranscription(ctx context.Context, opts realtime.TranscriptionOptions) (*realtime.Transcriber, error)
}

// spanRetryAfter is how long a refused session keeps the Service uploading.
const spanRetryAfter = time.Minute

// spanMin is the shortest span the API commits (100 ms); a shorter one is padded with silence.
const spanMin = 100 * time.Millisecond

// spanStream is one utterance chunk's transcription session (hearing clock only, but for the
// goroutines it starts).
type spanStream struct {
	opened chan struct{} // closed when the dial is over
	tr     *realtime.Transcriber
	err    error

	keyed bool
	utt   uint64 // the endpointer's utterance and chunk it transcribes (set by the first span)
	chunk int
	sent  int                 // samples of the chunk committed
	spans []*sttFuture        // each span's transcript
	rs    *resample.Resampler // to 24 kHz mono, across spans
	mu    sync.Mutex          // orders the spans' resample-and-commit
}

// spansWanted reports whether span transcription is configured and the provider is not known
// to refuse it.
func (s *session) spansWanted() bool {
	if _, ok := s.svc.opts.LLM.(SessionTranscriber); !ok {
		return false
	}
	cfg := s.svc.cfg()
	return pauseTranscription(cfg) && cfg.Voice.Speculation.Transcription != "upload" &&
		s.svc.now().UnixNano() >= s.svc.spansOffUntil.Load()
}

// openSpans starts the speaker's transcription session for the utterance starting now.
func (sp *speaker) openSpans() {
	s := sp.s
	st := &spanStream{opened: make(chan struct{})}
	sp.stream = st
	s.wg.Go(func() {
		defer close(st.opened)
		cfg := s.svc.cfg().Voice.STTPipeline
		rs, err := resample.New(sp.format, pcm.Mono24k())
		if err != nil {
			st.err = fmt.Errorf("voice: span transcription: %w", err)
			return
		}
		st.rs = rs
		st.tr, st.err = s.svc.opts.LLM.(SessionTranscriber).OpenTranscription(s.ctx, realtime.TranscriptionOptions{
			Model: cfg.TranscriptionModel, Language: cfg.Language, Prompt: s.svc.cfg().Bot.Name})
		if st.err != nil && s.ctx.Err() == nil {
			s.svc.spansOffUntil.Store(s.svc.now().Add(spanRetryAfter).UnixNano())
			s.metrics.spanSession("refused")
			s.log.Warn("voice_span_session_failed", "user_id", sp.userID, "error", st.err,
				"retry_after_s", spanRetryAfter.Seconds())
			return
		}
		s.metrics.spanSession("opened")
	})
}

// transcribeSpans returns the transcript of a chunk's audio so far (the whole chunk at its
// end): the span since the last commit is committed and the result is every span joined.
// Without a session for this chunk it uploads the audio (and a session keyed to another
// chunk is retired). audio is the caller's copy.
func (sp *speaker) transcribeSpans(utt uint64, chunk int, audio []int16) *sttFuture {
	s, st := sp.s, sp.stream
	if st != nil && st.keyed && (st.utt != utt || st.chunk != chunk || len(audio) < st.sent) {
		sp.retireSpans()
		st = nil
	}
	if st == nil {
		return sp.upload(audio)
	}
	st.keyed, st.utt, st.chunk = true, utt, chunk
	if len(audio) > st.sent {
		span := audio[st.sent:]
		st.sent = len(audio)
		f := newSTTFuture()
		st.spans = append(st.spans, f)
		s.wg.Go(func() { f.set(st.commit(s.ctx, span)) })
	}
	spans := slices.Clone(st.spans)
	whole := newSTTFuture()
	s.wg.Go(func() {
		var words []string
		for _, f := range spans {
			r, ok := f.wait(s.ctx)
			if !ok {
				whole.set(sttResult{err: s.ctx.Err()})
				return
			}
			if r.err != nil {
				s.metrics.spanSession("fell_back")
				s.log.Warn("voice_span_failed", "user_id", sp.userID, "error", r.err)
				whole.set(s.transcribeChunk(audio, sp.format))
				return
			}
			if w := strings.TrimSpace(r.text); w != "" {
				words = append(words, w)
			}
		}
		whole.set(sttResult{text: strings.Join(words, " ")})
	})
	return whole
}

// upload transcribes audio in one request (no session).
func (sp *speaker) upload(audio []int16) *sttFuture {
	f := newSTTFuture()
	sp.s.wg.Go(func() { f.set(sp.s.transcribeChunk(audio, sp.format)) })
	return f
}

// commit resamples a span to 24 kHz mono (padded to spanMin), commits it once the session is
// open, and returns its transcript.
func (st *spanStream) commit(ctx context.Context, span []int16) sttResult {
	select {
	case <-st.opened:
	case <-ctx.Done():
		return sttResult{err: ctx.Err()}
	}
	if st.err != nil {
		return sttResult{err: st.err}
	}
	st.mu.Lock()
	out := make([]int16, max(st.rs.MaxOut(len(span)), int(spanMin*realtime.SampleRate/time.Second)))
	n, err := st.rs.Process(out, span)
	if err != nil {
		st.mu.Unlock()
		return sttResult{err: fmt.Errorf("voice: span transcription: %w", err)}
	}
	n = max(n, int(spanMin*realtime.SampleRate/time.Second))
	committed, err := st.tr.Commit(ctx, pcm.AppendBytes(nil, out[:n]))
	st.mu.Unlock()
	if err != nil {
		return sttResult{err: err}
	}
	text, err := committed.Wait(ctx)
	return sttResult{text: text, err: err}
}

// retireSpans lets go of the speaker's session: it closes once every span has its transcript.
func (sp *speaker) retireSpans() {
	st := sp.stream
	sp.stream = nil
	if st == nil {
		return
	}
	spans := slices.Clone(st.spans)
	ctx := sp.s.ctx
	sp.s.wg.Go(func() {
		<-st.opened
		for _, f := range spans {
			f.wait(ctx)
		}
		if st.tr != nil {
			_ = st.tr.Close()
		}
	})
}
