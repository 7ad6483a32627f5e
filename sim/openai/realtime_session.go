package openaisim

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// rtClientEvent is the envelope of every realtime client event; the fields
// of all handled types are flattened here (untrusted input).
type rtClientEvent struct {
	Type           string          `json:"type"`
	EventID        string          `json:"event_id"`
	Session        json.RawMessage `json:"session"`
	Audio          *string         `json:"audio"`
	Item           json.RawMessage `json:"item"`
	ItemID         string          `json:"item_id"`
	PreviousItemID *string         `json:"previous_item_id"`
	ContentIndex   int             `json:"content_index"`
	AudioEndMs     *int            `json:"audio_end_ms"`
	Response       json.RawMessage `json:"response"`
	ResponseID     string          `json:"response_id"`
}

// decodeClientEvent parses one client event.
func decodeClientEvent(data []byte) (*rtClientEvent, error) {
	var ev rtClientEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if ev.Type == "" {
		return &ev, fmt.Errorf("missing required parameter: 'type'")
	}
	return &ev, nil
}

func defaultSession(id, model string, now time.Time) map[string]any {
	return map[string]any{
		"type": "realtime", "object": "realtime.session", "id": id, "model": model,
		"output_modalities": []any{"audio"}, "instructions": "",
		"tools": []any{}, "tool_choice": "auto", "max_output_tokens": "inf",
		"tracing": nil, "truncation": "auto", "prompt": nil, "include": nil,
		"expires_at": now.Add(time.Hour).Unix(),
		"audio": map[string]any{
			"input": map[string]any{
				"format":          map[string]any{"type": "audio/pcm", "rate": 24000},
				"transcription":   nil,
				"noise_reduction": nil,
				"turn_detection": map[string]any{
					"type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300,
					"silence_duration_ms": 500, "idle_timeout_ms": nil,
					"create_response": true, "interrupt_response": true,
				},
			},
			"output": map[string]any{
				"format": map[string]any{"type": "audio/pcm", "rate": 24000},
				"voice":  "alloy", "speed": 1.0,
			},
		},
	}
}

// mergeJSON merges src into dst: objects merge recursively, anything else
// (including null) replaces.
func mergeJSON(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeJSON(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		a := make([]any, len(t))
		for i, x := range t {
			a[i] = deepCopy(x)
		}
		return a
	default:
		return v
	}
}

func (c *rtSession) sessionSnapshot() map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return deepCopy(c.session).(map[string]any)
}

// path reads a nested value from the session. Call with c.mu held.
func (c *rtSession) pathLocked(keys ...string) any {
	var v any = c.session
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// vadConfig is the effective server VAD configuration.
type vadConfig struct {
	enabled           bool
	threshold         float64
	prefixMs          int
	silenceMs         int
	createResponse    bool
	interruptResponse bool
}

func num(v any, def float64) float64 {
	if f, ok := v.(float64); ok {
		return f
	}
	if i, ok := v.(int); ok {
		return float64(i)
	}
	return def
}

func boolean(v any, def bool) bool {
	if b, ok := v.(bool); ok {
		return b
	}
	return def
}

func (c *rtSession) vadConfigLocked() vadConfig {
	td, ok := c.pathLocked("audio", "input", "turn_detection").(map[string]any)
	if !ok {
		return vadConfig{}
	}
	return vadConfig{
		enabled:           true,
		threshold:         num(td["threshold"], 0.5),
		prefixMs:          int(num(td["prefix_padding_ms"], 300)),
		silenceMs:         int(num(td["silence_duration_ms"], 500)),
		createResponse:    boolean(td["create_response"], true),
		interruptResponse: boolean(td["interrupt_response"], true),
	}
}

// validateSessionUpdate checks a session.update payload.
func validateSessionUpdate(upd map[string]any) (param, msg string) {
	typ, _ := upd["type"].(string)
	if typ == "" {
		return "session.type", "Missing required parameter: 'session.type'."
	}
	if typ != "realtime" && typ != "transcription" {
		return "session.type", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'realtime' and 'transcription'.", typ)
	}
	if m, ok := upd["output_modalities"]; ok {
		a, _ := m.([]any)
		if len(a) != 1 || (a[0] != "audio" && a[0] != "text") {
			return "session.output_modalities", "Invalid 'session.output_modalities': expected ['audio'] or ['text']."
		}
	}
	if audio, ok := upd["audio"].(map[string]any); ok {
		if in, ok := audio["input"].(map[string]any); ok {
			if td, ok := in["turn_detection"].(map[string]any); ok {
				if t, _ := td["type"].(string); t != "server_vad" && t != "semantic_vad" {
					return "session.audio.input.turn_detection.type", fmt.Sprintf("Invalid value: '%v'. Supported values are: 'server_vad' and 'semantic_vad'.", td["type"])
				}
			}
			if f, ok := in["format"].(map[string]any); ok && f["type"] != "audio/pcm" {
				return "session.audio.input.format.type", fmt.Sprintf("openaisim: only 'audio/pcm' (24 kHz) input is simulated, got '%v'.", f["type"])
			}
			if f, ok := in["format"].(map[string]any); ok && f["rate"] != nil && f["rate"] != 24000.0 {
				return "session.audio.input.format.rate", fmt.Sprintf("Invalid 'session.audio.input.format.rate': %v. Only 24000 is supported.", f["rate"])
			}
		}
		if out, ok := audio["output"].(map[string]any); ok {
			if f, ok := out["format"].(map[string]any); ok && f["type"] != "audio/pcm" {
				return "session.audio.output.format.type", fmt.Sprintf("openaisim: only 'audio/pcm' (24 kHz) output is simulated, got '%v'.", f["type"])
			}
		}
	}
	return "", ""
}

// handleEvent processes one client event (read-loop goroutine only).
func (c *rtSession) handleEvent(data []byte) {
	ev, err := decodeClientEvent(data)
	rec := RealtimeEvent{Session: c.id, Transcription: c.transcriptionOnly, Raw: append(json.RawMessage(nil), data...), At: c.s.now()}
	if ev != nil {
		rec.Type, rec.EventID = ev.Type, ev.EventID
	}
	c.s.recordEvent(rec)
	c.s.conformEvent(data)
	if ev != nil && (c.dropOnEvent(ev.Type) || c.ignore != "" && ev.Type == c.ignore) {
		return
	}
	if err != nil {
		eid := ""
		if ev != nil {
			eid = ev.EventID
		}
		c.sendError(eid, "invalid_request_error", "invalid_json", "", "Failed to parse client event: "+err.Error())
		return
	}
	if strings.HasPrefix(ev.Type, "conversation.") || strings.HasPrefix(ev.Type, "response.") {
		if c.refuseInTranscription(ev) {
			return
		}
	}
	switch ev.Type {
	case "session.update":
		c.onSessionUpdate(ev)
	case "input_audio_buffer.append":
		c.onAppend(ev)
	case "input_audio_buffer.commit":
		c.onCommit(ev)
	case "input_audio_buffer.clear":
		c.mu.Lock()
		c.buf = c.buf[:0]
		c.vad.inSpeech, c.vad.silenceMs = false, 0
		c.mu.Unlock()
		c.send(map[string]any{"type": "input_audio_buffer.cleared"})
	case "conversation.item.create":
		c.onItemCreate(ev)
	case "conversation.item.truncate":
		c.onTruncate(ev)
	case "conversation.item.delete":
		c.onDelete(ev)
	case "response.create":
		c.onResponseCreate(ev)
	case "response.cancel":
		c.onResponseCancel(ev)
	default:
		c.sendError(ev.EventID, "invalid_request_error", "invalid_value", "type",
			fmt.Sprintf("Invalid value: '%s'. Supported values are: 'session.update', 'input_audio_buffer.append', 'input_audio_buffer.commit', 'input_audio_buffer.clear', 'conversation.item.create', 'conversation.item.truncate', 'conversation.item.delete', 'response.create', and 'response.cancel'.", ev.Type))
	}
}

func (c *rtSession) onSessionUpdate(ev *rtClientEvent) {
	var upd map[string]any
	if err := json.Unmarshal(ev.Session, &upd); err != nil || upd == nil {
		c.sendError(ev.EventID, "invalid_request_error", "missing_required_parameter", "session", "Missing required parameter: 'session'.")
		return
	}
	param, msg := validateSessionUpdate(upd)
	if msg == "" {
		param, msg = c.sessionTypeMismatch(upd)
	}
	if msg != "" {
		code := "invalid_value"
		if strings.HasPrefix(msg, "Missing") {
			code = "missing_required_parameter"
		}
		c.sendError(ev.EventID, "invalid_request_error", code, param, msg)
		return
	}
	for _, k := range []string{"id", "object", "expires_at"} {
		delete(upd, k)
	}
	c.mu.Lock()
	mergeJSON(c.session, upd)
	c.mu.Unlock()
	c.send(map[string]any{"type": "session.updated", "session": c.sessionSnapshot()})
}

func (c *rtSession) onAppend(ev *rtClientEvent) {
	if ev.Audio == nil {
		c.sendError(ev.EventID, "invalid_request_error", "missing_required_parameter", "audio", "Missing required parameter: 'audio'.")
		return
	}
	audio, err := base64.StdEncoding.DecodeString(*ev.Audio)
	if err != nil {
		c.sendError(ev.EventID, "invalid_request_error", "invalid_value", "audio", "Invalid 'audio': not valid base64.")
		return
	}
	c.mu.Lock()
	c.buf = append(c.buf, audio...)
	cfg := c.vadConfigLocked()
	var events []vadEvent
	var times []int
	if cfg.enabled {
		events, times = c.feedVADLocked(audio, cfg)
	} else {
		c.vad.frameStart += len(audio) / 2 * 1000 / SpeechRate
	}
	c.mu.Unlock()
	for i, e := range events {
		switch e {
		case vadStarted:
			id := c.s.newID("item")
			c.mu.Lock()
			c.vad.itemID = id
			active := c.active
			c.mu.Unlock()
			c.send(map[string]any{"type": "input_audio_buffer.speech_started", "audio_start_ms": times[i], "item_id": id})
			if active != nil && cfg.interruptResponse {
				active.cancelWith("turn_detected")
			}
		case vadStopped:
			c.mu.Lock()
			id := c.vad.itemID
			c.mu.Unlock()
			c.send(map[string]any{"type": "input_audio_buffer.speech_stopped", "audio_end_ms": times[i], "item_id": id})
			if c.commit("", id) && cfg.createResponse {
				c.startResponse("", nil)
			}
		}
	}
}

func (c *rtSession) onCommit(ev *rtClientEvent) {
	c.commit(ev.EventID, "")
}

// commit turns the input buffer into a user audio item. It reports whether
// an item was created.
func (c *rtSession) commit(clientEventID, id string) bool {
	c.mu.Lock()
	ms := len(c.buf) / 2 * 1000 / SpeechRate
	if ms < 100 {
		c.mu.Unlock()
		c.sendError(clientEventID, "invalid_request_error", "input_audio_buffer_commit_empty", "",
			fmt.Sprintf("Error committing input audio buffer: buffer too small. Expected at least 100ms of audio, but buffer only has %.2fms of audio.", float64(ms)))
		return false
	}
	if id == "" {
		id = c.s.newID("item")
	}
	prev := c.lastItemIDLocked()
	item := map[string]any{"id": id, "object": "realtime.item", "type": "message", "status": "completed", "role": "user",
		"content": []any{map[string]any{"type": "input_audio", "transcript": nil}}}
	it := &rtItem{id: id, typ: "message", role: "user", audioMs: ms, truncateMs: -1, raw: item}
	c.buf = c.buf[:0]
	c.items = append(c.items, it)
	transcribe := c.pathLocked("audio", "input", "transcription") != nil
	offset := time.Duration(c.committedMs) * time.Millisecond
	c.committedMs += ms
	c.mu.Unlock()

	c.send(map[string]any{"type": "input_audio_buffer.committed", "previous_item_id": prev, "item_id": id})
	c.itemAdded(prev, item)
	c.itemDone(item)
	switch {
	case transcribe && c.transcriptionOnly:
		c.queueTranscription(rtTranscription{it: it, offset: offset})
	case transcribe:
		c.transcribe(it, offset)
	}
	return true
}

func (c *rtSession) lastItemIDLocked() any {
	if len(c.items) == 0 {
		return nil
	}
	return c.items[len(c.items)-1].id
}
