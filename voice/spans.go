package voice

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/banterbot/banter/audio/pcm"
	"github.com/banterbot/banter/audio/resample"
	"github.com/banterbot/banter/llm"
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

// spanStream is one utterance chunk's transcription session. The hearing clock keys it and
// queues its spans; one worker goroutine (openSpans) dials, then resamples and commits the
// spans in the order they were queued.
type spanStream struct {
	jobs chan spanJob // spans to commit, in order; closed when the stream is retired

	// Hearing clock only.
	keyed bool
	utt   uint64 // the endpointer's utterance and chunk it transcribes (set by the first span)
	chunk int
	sent  int          // samples of the chunk queued
	spans []*sttFuture // each span's transcript
}

// spanJob is one span to commit and where its transcript goes.
type spanJob struct {
	audio []int16
	f     *sttFuture
}

// errNoSession marks the spans of a stream whose session did not open (refused, counted and
// logged once by dialSpans): they are uploaded without a word more.
var errNoSession = errors.New("voice: span transcription: no session")

// spanTimeout bounds the wait for a committed span's transcript (then the words so far are
// uploaded).
const spanTimeout = 15 * time.Second

// maxQueuedSpans bounds the spans waiting for the session (a span that does not fit is
// uploaded with the words so far).
const maxQueuedSpans = 16

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

// openSpans starts the speaker's transcription session for the utterance starting now: its
// worker dials while the member talks, then commits each queued span in order; once the
// stream is retired and every span has its transcript, it closes the session.
func (sp *speaker) openSpans() {
	s := sp.s
	st := &spanStream{jobs: make(chan spanJob, maxQueuedSpans)}
	sp.stream = st
	heard := sp.heardTally()
	s.wg.Go(func() {
		tr, rs, err := sp.dialSpans(heard)
		var pending sync.WaitGroup
		for job := range st.jobs {
			if err != nil {
				job.f.set(sttResult{err: fmt.Errorf("%w: %w", errNoSession, err)})
				continue
			}
			committed, cerr := commitSpan(s.ctx, tr, rs, job.audio)
			if cerr != nil {
				job.f.set(sttResult{err: cerr})
				continue
			}
			pending.Go(func() {
				ctx, cancel := context.WithTimeout(s.ctx, spanTimeout)
				defer cancel()
				text, err := committed.Wait(ctx)
				job.f.set(sttResult{text: text, err: err})
			})
		}
		pending.Wait()
		if tr != nil {
			_ = tr.Close()
		}
	})
}

// dialSpans opens the transcription session and the resampler to its 24 kHz; a refusal keeps
// the Service uploading for spanRetryAfter. The session's spans cost heard (the utterance's).
func (sp *speaker) dialSpans(heard *llm.Tally) (*realtime.Transcriber, *resample.Resampler, error) {
	s := sp.s
	rs, err := resample.New(sp.format, pcm.Mono24k())
	if err != nil {
		return nil, nil, fmt.Errorf("voice: span transcription: %w", err)
	}
	cfg := s.svc.cfg()
	tr, err := s.svc.opts.LLM.(SessionTranscriber).OpenTranscription(s.chargeTo(SlotTranscription, heard), realtime.TranscriptionOptions{
		Model: cfg.Voice.STTPipeline.TranscriptionModel, Language: cfg.Voice.STTPipeline.Language, Prompt: s.sttPrompt(cfg.Bot.Name)})
	if err != nil {
		if s.ctx.Err() == nil {
			s.svc.spansOffUntil.Store(s.svc.now().Add(spanRetryAfter).UnixNano())
			s.metrics.spanSession("refused")
			s.logger().Warn("voice_span_session_failed", "user_id", sp.userID, "error", err,
				"retry_after_s", spanRetryAfter.Seconds())
		}
		return nil, nil, err
	}
	s.metrics.spanSession("opened")
	return tr, rs, nil
}

// commitSpan resamples a span to 24 kHz mono (padded with silence to spanMin) and commits it.
func commitSpan(ctx context.Context, tr *realtime.Transcriber, rs *resample.Resampler, span []int16) (*realtime.Span, error) {
	minimum := int(spanMin * realtime.SampleRate / time.Second)
	out := make([]int16, max(rs.MaxOut(len(span)), minimum))
	n, err := rs.Process(out, span)
	if err != nil {
		return nil, fmt.Errorf("voice: span transcription: %w", err)
	}
	return tr.Commit(ctx, pcm.AppendBytes(nil, out[:max(n, minimum)]))
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
		f := newSTTFuture()
		select {
		case st.jobs <- spanJob{audio: audio[st.sent:], f: f}:
		default:
			f.set(sttResult{err: errors.New("voice: span transcription: too many spans waiting")})
		}
		st.sent = len(audio)
		st.spans = append(st.spans, f)
	}
	spans := slices.Clone(st.spans)
	whole := newSTTFuture()
	heard := sp.heardTally()
	s.wg.Go(func() {
		var words []string
		for _, f := range spans {
			r, ok := f.wait(s.ctx)
			if !ok {
				whole.set(sttResult{err: s.ctx.Err()})
				return
			}
			if r.err != nil {
				if !errors.Is(r.err, errNoSession) { // a refused session was counted and logged once
					s.metrics.spanSession("fell_back")
					s.logger().Warn("voice_span_failed", "user_id", sp.userID, "error", r.err)
				}
				whole.set(s.transcribeChunk(audio, sp.format, heard))
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
	heard := sp.heardTally()
	sp.s.wg.Go(func() { f.set(sp.s.transcribeChunk(audio, sp.format, heard)) })
	return f
}

// retireSpans lets go of the speaker's session: its worker commits what is queued and closes
// it once every span has its transcript.
func (sp *speaker) retireSpans() {
	if st := sp.stream; st != nil {
		sp.stream = nil
		close(st.jobs)
	}
}
