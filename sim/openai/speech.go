package openaisim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"unicode/utf8"
)

// speechRequest is POST /v1/audio/speech.
// https://platform.openai.com/docs/api-reference/audio/createSpeech
type speechRequest struct {
	Model          string          `json:"model"`
	Input          string          `json:"input"`
	Voice          json.RawMessage `json:"voice"`
	Instructions   string          `json:"instructions"`
	ResponseFormat string          `json:"response_format"`
	Speed          *float64        `json:"speed"`
	StreamFormat   string          `json:"stream_format"`
}

// speechChunk is the size of one streamed speech chunk: 100 ms of audio.
const speechChunk = SpeechRate / 10 * 2

// parseSpeechRequest decodes and validates a speech body (untrusted) and
// returns the voice name.
func parseSpeechRequest(body []byte) (*speechRequest, string, error) {
	var req speechRequest
	if err := strictJSON(body, &req); err != nil {
		return nil, "", err
	}
	if req.Model == "" {
		return nil, "", reqErr("model", "Missing required parameter: 'model'.")
	}
	if req.Input == "" {
		return nil, "", reqErr("input", "Missing required parameter: 'input'.")
	}
	if utf8.RuneCountInString(req.Input) > 4096 {
		return nil, "", reqErr("input", "'input' is too long: string longer than 4096 characters.")
	}
	voice := ""
	v := bytes.TrimSpace(req.Voice)
	switch {
	case len(v) == 0 || string(v) == "null":
		return nil, "", reqErr("voice", "Missing required parameter: 'voice'.")
	case v[0] == '"':
		_ = json.Unmarshal(v, &voice)
	default:
		var obj struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(v, &obj); err != nil || obj.ID == "" {
			return nil, "", reqErr("voice", "Invalid 'voice': expected a voice name or an object with 'id'.")
		}
		voice = obj.ID
	}
	if voice == "" {
		return nil, "", reqErr("voice", "Missing required parameter: 'voice'.")
	}
	if req.ResponseFormat == "" {
		req.ResponseFormat = "mp3"
	}
	switch req.ResponseFormat {
	case "pcm", "wav":
	case "mp3", "opus", "aac", "flac":
		return nil, "", reqErr("response_format", "openaisim: response_format '%s' is not simulated; use 'pcm' or 'wav'.", req.ResponseFormat)
	default:
		return nil, "", reqErr("response_format", "Invalid value: '%s'. Supported values are: 'mp3', 'opus', 'aac', 'flac', 'wav', and 'pcm'.", req.ResponseFormat)
	}
	if req.Speed != nil && (*req.Speed < 0.25 || *req.Speed > 4) {
		return nil, "", reqErr("speed", "Invalid 'speed': must be between 0.25 and 4.0.")
	}
	switch req.StreamFormat {
	case "", "audio", "sse":
	default:
		return nil, "", reqErr("stream_format", "Invalid value: '%s'. Supported values are: 'sse' and 'audio'.", req.StreamFormat)
	}
	return &req, voice, nil
}

func (s *Server) handleSpeech(w http.ResponseWriter, r *http.Request) {
	rec := s.newRecord(r, EndpointSpeech)
	defer s.record(rec)
	body, ok := s.readBody(w, r, rec, 1<<20)
	if !ok {
		return
	}
	req, voice, err := parseSpeechRequest(body)
	if err != nil {
		s.reject(w, rec, err)
		return
	}
	rec.Model, rec.Voice, rec.Format, rec.LastUserText, rec.Prompt = req.Model, voice, req.ResponseFormat, req.Input, req.Input
	rec.Instructions = req.Instructions
	rec.Stream = req.StreamFormat == "sse"
	o := s.resolve(&matchInput{endpoint: EndpointSpeech, model: req.Model, lastUser: req.Input, prompt: req.Input, streaming: rec.Stream})
	rec.Rule = o.rule
	if s.preFault(w, r, &o, rec) {
		return
	}
	speed := 1.0
	if req.Speed != nil {
		speed = *req.Speed
	}
	var pcm []byte
	if o.reply.Audio != nil {
		pcm = o.reply.Audio[:len(o.reply.Audio)&^1]
	} else {
		pcm = Synthesize(req.Input, voice, speed)
	}
	rec.AudioDuration = pcmDuration(len(pcm), SpeechRate)
	// AudioBytes counts the speech sent (written to the client): a client that goes away
	// (a barge-in, a speculation thrown away) is billed the audio it was sent, not the rest.
	pc := s.newPacer(r.Context(), o.latency, &rec.Injected)
	if !pc.wait(o.latency.TTSFirstByte, &rec.Injected.TTSFirstByte) {
		rec.ClientGone = true
		return
	}
	rec.Status = http.StatusOK
	if rec.Stream {
		sw := s.newSSE(w, r, false, o.fault)
		for i := 0; i < len(pcm); i += speechChunk {
			if i > 0 && !pc.wait(o.latency.PerAudioChunk, &rec.Injected.AudioChunks) {
				rec.ClientGone = true
				return
			}
			chunk := pcm[i:min(i+speechChunk, len(pcm))]
			sw.event("speech.audio.delta", map[string]any{"type": "speech.audio.delta", "audio": base64.StdEncoding.EncodeToString(chunk)}, true)
			rec.AudioBytes += len(chunk)
		}
		in := countTokens(req.Input)
		out := len(pcm) / 2 / 480 // ~20 ms per audio token
		s.record(rec)
		sw.event("speech.audio.done", map[string]any{"type": "speech.audio.done", "usage": map[string]int{
			"input_tokens": in, "output_tokens": out, "total_tokens": in + out}}, false)
		return
	}
	s.writeSpeech(w, r, rec, &o, pc, pcm, req.ResponseFormat == "wav")
}

// writeSpeech writes a non-streamed speech answer: PCM (or a WAV) in chunks of speechChunk, at
// the pace and with the faults o asks for. rec counts the audio written (AudioBytes) and whether
// the client went away (ClientGone); it is recorded just before the last chunk.
func (s *Server) writeSpeech(w http.ResponseWriter, r *http.Request, rec *Recorded, o *outcome, pc *pacer, pcm []byte, wav bool) {
	h := w.Header()
	if wav {
		h.Set("Content-Type", "audio/wav")
	} else {
		h.Set("Content-Type", "audio/pcm")
	}
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	if wav {
		_, _ = w.Write(appendWAVHeader(nil, len(pcm), SpeechRate, 1))
	}
	n := 0
	for i := 0; i < len(pcm); i += speechChunk {
		if i > 0 && !pc.wait(o.latency.PerAudioChunk, &rec.Injected.AudioChunks) {
			rec.ClientGone = true
			return
		}
		if o.fault.TruncateAfterEvents > 0 && n >= o.fault.TruncateAfterEvents {
			panic(http.ErrAbortHandler)
		}
		if o.fault.StallAfterEvents > 0 && n >= o.fault.StallAfterEvents {
			select {
			case <-r.Context().Done():
			case <-s.ctx.Done():
			}
			panic(http.ErrAbortHandler)
		}
		chunk := pcm[i:min(i+speechChunk, len(pcm))]
		if i+speechChunk >= len(pcm) {
			rec.AudioBytes += len(chunk)
			s.record(rec)
		}
		if _, err := w.Write(chunk); err != nil {
			rec.ClientGone = true
			return
		}
		if i+speechChunk < len(pcm) {
			rec.AudioBytes += len(chunk)
		}
		n++
		if fl != nil {
			fl.Flush()
		}
	}
}
