package openaisim

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
)

// rtResponse is one in-flight realtime response.
type rtResponse struct {
	id     string
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex // guards following
	reason string     // why it was cancelled: client_cancelled, turn_detected
}

func (r *rtResponse) cancelWith(reason string) {
	r.mu.Lock()
	if r.reason == "" {
		r.reason = reason
	}
	r.mu.Unlock()
	r.cancel()
}

func (r *rtResponse) cancelReason() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reason
}

// rtResponseParams are the response.create overrides the simulator honours.
type rtResponseParams struct {
	Instructions     *string  `json:"instructions"`
	OutputModalities []string `json:"output_modalities"`
	Conversation     *string  `json:"conversation"`
	Metadata         any      `json:"metadata"`
}

func (c *rtSession) onResponseCreate(ev *rtClientEvent) {
	var p rtResponseParams
	if len(ev.Response) > 0 && string(ev.Response) != "null" {
		if err := json.Unmarshal(ev.Response, &p); err != nil {
			c.sendError(ev.EventID, "invalid_request_error", "invalid_value", "response", "Invalid 'response': "+err.Error())
			return
		}
	}
	c.startResponse(ev.EventID, &p)
}

func (c *rtSession) onResponseCancel(ev *rtClientEvent) {
	c.mu.Lock()
	r := c.active
	c.mu.Unlock()
	if r == nil || (ev.ResponseID != "" && ev.ResponseID != r.id) {
		c.sendError(ev.EventID, "invalid_request_error", "response_cancel_not_active", "",
			"Cancellation failed: no active response found.")
		return
	}
	r.cancelWith("client_cancelled")
}

// startResponse begins a response unless one is active.
func (c *rtSession) startResponse(clientEventID string, p *rtResponseParams) {
	if p == nil {
		p = &rtResponseParams{}
	}
	c.mu.Lock()
	if c.active != nil {
		id := c.active.id
		c.mu.Unlock()
		c.sendError(clientEventID, "invalid_request_error", "conversation_already_has_active_response", "",
			fmt.Sprintf("Conversation already has an active response in progress: %s. Wait until the response is finished before creating a new one.", id))
		return
	}
	r := &rtResponse{id: c.s.newID("resp")}
	r.ctx, r.cancel = context.WithCancel(c.ctx)
	c.active = r
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer r.cancel()
		c.runResponse(r, p)
		c.endResponse(r)
	}()
}

// responseInputLocked gathers what rules match on. Call with c.mu held.
func (c *rtSession) responseInputLocked(p *rtResponseParams) (*matchInput, *Recorded) {
	instr, _ := c.session["instructions"].(string)
	if p.Instructions != nil {
		instr = *p.Instructions
	}
	in := &matchInput{endpoint: EndpointRealtimeResponse, model: c.model}
	var lines []string
	if p.Conversation == nil || *p.Conversation != "none" {
		for _, it := range c.items {
			switch it.typ {
			case "message":
				if it.role == "user" {
					in.lastUser = it.text
					if it.audioMs > 0 {
						in.audio, in.hasAudio = time.Duration(it.audioMs)*time.Millisecond, true
					} else {
						in.audio, in.hasAudio = 0, false
					}
				}
				lines = append(lines, it.role+": "+it.text)
			case "function_call":
				lines = append(lines, "function_call "+it.text)
			case "function_call_output":
				cid, _ := it.raw["call_id"].(string)
				lines = append(lines, "function_call_output "+cid+": "+it.text)
			}
		}
	}
	in.prompt = flatten(instr, lines)
	var tools []Tool
	if ts, ok := c.session["tools"].([]any); ok {
		for _, t := range ts {
			tm, _ := t.(map[string]any)
			name, _ := tm["name"].(string)
			typ, _ := tm["type"].(string)
			desc, _ := tm["description"].(string)
			params, _ := json.Marshal(tm["parameters"])
			tools = append(tools, Tool{Type: typ, Name: name, Description: desc, Parameters: params})
			in.tools = append(in.tools, name)
		}
	}
	rec := &Recorded{
		Endpoint: EndpointRealtimeResponse, RequestID: c.requestID, Method: "WS", Path: "/v1/realtime", Model: c.model,
		Instructions: instr, LastUserText: in.lastUser, Prompt: in.prompt, Tools: tools,
		AudioDuration: in.audio, Stream: true, At: c.s.now(),
	}
	if v, ok := c.pathLocked("audio", "output", "voice").(string); ok {
		rec.Voice = v
	}
	return in, rec
}

// runResponse streams one response: response.created, output items with
// audio + transcript deltas (or text, or function calls), response.done.
func (c *rtSession) runResponse(r *rtResponse, p *rtResponseParams) {
	c.mu.Lock()
	in, rec := c.responseInputLocked(p)
	modalities := []string{"audio"}
	if m, ok := c.session["output_modalities"].([]any); ok && len(m) == 1 && m[0] == "text" {
		modalities = []string{"text"}
	}
	if len(p.OutputModalities) == 1 {
		modalities = p.OutputModalities
	}
	c.mu.Unlock()
	defer c.s.record(rec)

	o := c.s.resolve(in)
	rec.Rule, rec.Fault = o.rule, o.fault
	c.s.track(rec)
	c.armFaults(o.fault)
	run := &rtRun{c: c, r: r, rec: rec, o: &o, audioOut: modalities[0] == "audio",
		inConversation: p.Conversation == nil || *p.Conversation != "none"} // "none": an out-of-band response
	run.resp = map[string]any{
		"id": r.id, "object": "realtime.response", "status": "in_progress", "status_details": nil,
		"output": []any{}, "conversation_id": conversationID(c.id, p), "output_modalities": modalities,
		"max_output_tokens": "inf", "usage": nil, "metadata": p.Metadata,
		"audio": map[string]any{"output": map[string]any{"format": map[string]any{"type": "audio/pcm", "rate": 24000}, "voice": rec.Voice}},
	}
	c.send(map[string]any{"type": "response.created", "response": deepCopy(run.resp)})
	if o.fault.Status != 0 {
		e := errorFor(o.fault.Status, o.fault.Message)
		c.send(map[string]any{"type": "error", "error": e})
		run.finish("failed", map[string]any{"type": "failed", "error": map[string]any{"type": e.Type, "code": e.Code}})
		return
	}
	if o.fault.Timeout {
		<-r.ctx.Done()
		if c.ctx.Err() == nil {
			run.cancelled()
		}
		return
	}
	pl := c.s.makePlan(&o, in.lastUser, rec.Tools, toolPolicyAuto, "")
	if say, ok := readAloud(deref(p.Instructions)); ok && o.rule == "" {
		pl.text = say // the response's own instructions ask for text to be voiced: the text
	}
	pc := c.s.newPacer(r.ctx, o.latency, &rec.Injected)
	run.pace = func() bool {
		run.outTokens++
		return pc.token()
	}
	text := pl.text
	if pl.refusal != "" {
		text = pl.refusal
	}
	if text != "" && !run.message(text) {
		return
	}
	for _, call := range pl.calls {
		if !run.call(call) {
			return
		}
	}
	run.finish("completed", nil)
}

// armFaults sets up the faults a response injects into the socket's
// writes: a drop after N events, a malformed first delta.
func (c *rtSession) armFaults(f Fault) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if f.DropAfterEvents > 0 {
		c.dropAt = c.sent + f.DropAfterEvents
	}
	if f.MalformedJSON {
		c.malformedDelta = true
	}
}

// rtRun is one response being streamed.
type rtRun struct {
	c              *rtSession
	r              *rtResponse
	rec            *Recorded
	o              *outcome
	resp           map[string]any
	output         []any
	outTokens      int
	audioSent      int // bytes of output audio sent (24 kHz s16le)
	pace           func() bool
	audioOut       bool
	inConversation bool
}

// finish ends the response with response.done.
func (run *rtRun) finish(status string, details any) {
	run.resp["status"], run.resp["status_details"], run.resp["output"] = status, details, run.output
	if run.output == nil {
		run.resp["output"] = []any{}
	}
	// Text tokens from the text; audio tokens from the audio's duration: 10 a second of input,
	// 20 a second of output (what was sent, when cut short), rounded up.
	inText, inAudio := countTokens(run.rec.Prompt), int(math.Ceil(run.rec.AudioDuration.Seconds()*10))
	outAudio := int(math.Ceil(float64(run.audioSent) / (24000 * 2) * 20))
	in, out := inText+inAudio, run.outTokens+outAudio
	run.resp["usage"] = map[string]any{"total_tokens": in + out, "input_tokens": in, "output_tokens": out,
		"input_token_details":  map[string]any{"text_tokens": inText, "audio_tokens": inAudio, "cached_tokens": 0},
		"output_token_details": map[string]any{"text_tokens": run.outTokens, "audio_tokens": outAudio}}
	run.rec.Usage = Usage{InputTokens: in, AudioInputTokens: inAudio, OutputTokens: out, AudioOutputTokens: outAudio}
	run.c.s.record(run.rec)
	run.c.endResponse(run.r) // before response.done: the client may create the next one at once
	run.c.send(map[string]any{"type": "response.done", "response": run.resp})
}

// cancelled ends a response cut short (client_cancelled or turn_detected).
func (run *rtRun) cancelled() {
	reason := run.r.cancelReason()
	if reason == "" {
		reason = "client_cancelled"
	}
	run.finish("cancelled", map[string]any{"type": "cancelled", "reason": reason})
}

// stop ends a response whose pacing was interrupted: cancelled, unless
// the whole session is going away.
func (run *rtRun) stop() {
	if run.c.ctx.Err() == nil {
		run.cancelled()
	}
}

// message streams the assistant message: transcript and audio deltas
// interleaved (≤ 200 ms of audio each), or text deltas. It reports false
// when the response was cut short (and has been ended).
func (run *rtRun) message(text string) bool {
	c, idx := run.c, len(run.output)
	itemID := c.s.newID("item")
	partType := "output_text"
	if run.audioOut {
		partType = "output_audio"
	}
	item := map[string]any{"id": itemID, "object": "realtime.item", "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}
	c.send(map[string]any{"type": "response.output_item.added", "response_id": run.r.id, "output_index": idx, "item": deepCopy(item)})
	it := &rtItem{id: itemID, typ: "message", role: "assistant", truncateMs: -1, raw: item}
	if run.inConversation {
		c.itemAdded(c.lastItemID(), deepCopy(item).(map[string]any))
		c.mu.Lock()
		c.items = append(c.items, it)
		c.mu.Unlock()
	}
	emptyPart := map[string]any{"type": partType, "text": ""}
	if run.audioOut {
		emptyPart = map[string]any{"type": partType, "transcript": ""}
	}
	c.send(map[string]any{"type": "response.content_part.added", "response_id": run.r.id, "item_id": itemID, "output_index": idx, "content_index": 0, "part": emptyPart})
	var pcm []byte
	if run.audioOut {
		if run.o.reply.Audio != nil {
			pcm = run.o.reply.Audio[:len(run.o.reply.Audio)&^1]
		} else {
			pcm = Synthesize(text, run.rec.Voice, 1)
		}
		run.rec.AudioBytes = len(pcm)
	}
	with := func(typ string, kv ...any) map[string]any {
		m := map[string]any{"type": typ, "response_id": run.r.id, "item_id": itemID, "output_index": idx, "content_index": 0}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	toks := tokens(text)
	sentAudio := 0
	var spoken strings.Builder
	for i, tok := range toks {
		if !run.pace() {
			run.audioSent += sentAudio
			c.markPartial(it, sentAudio, spoken.String())
			run.stop()
			return false
		}
		spoken.WriteString(tok)
		if !run.audioOut {
			c.sendEvent(with("response.output_text.delta", "delta", tok), true)
			continue
		}
		c.sendEvent(with("response.output_audio_transcript.delta", "delta", tok), true)
		upto := len(pcm) * (i + 1) / len(toks) &^ 1
		for sentAudio < upto {
			end := min(upto, sentAudio+9600) // ≤ 200 ms per delta
			c.sendEvent(with("response.output_audio.delta", "delta", base64.StdEncoding.EncodeToString(pcm[sentAudio:end])), true)
			sentAudio = end
		}
	}
	run.audioSent += sentAudio
	c.markPartial(it, sentAudio, text)
	part := map[string]any{"type": "output_text", "text": text}
	if run.audioOut {
		c.send(with("response.output_audio.done"))
		c.send(with("response.output_audio_transcript.done", "transcript", text))
		part = map[string]any{"type": "output_audio", "transcript": text}
	} else {
		c.send(with("response.output_text.done", "text", text))
	}
	c.send(with("response.content_part.done", "part", part))
	item["status"], item["content"] = "completed", []any{part}
	c.send(map[string]any{"type": "response.output_item.done", "response_id": run.r.id, "output_index": idx, "item": item})
	if run.inConversation {
		c.itemDone(deepCopy(item).(map[string]any))
	}
	run.output = append(run.output, item)
	return true
}

// call streams a function call item: its arguments in pieces.
func (run *rtRun) call(call ToolCall) bool {
	c, idx := run.c, len(run.output)
	itemID := c.s.newID("item")
	item := map[string]any{"id": itemID, "object": "realtime.item", "type": "function_call", "status": "in_progress",
		"name": call.Name, "call_id": call.CallID, "arguments": ""}
	c.send(map[string]any{"type": "response.output_item.added", "response_id": run.r.id, "output_index": idx, "item": deepCopy(item)})
	if run.inConversation {
		c.itemAdded(c.lastItemID(), deepCopy(item).(map[string]any))
	}
	for _, chunk := range chunkString(call.Arguments, 8) {
		if !run.pace() {
			run.stop()
			return false
		}
		c.sendEvent(map[string]any{"type": "response.function_call_arguments.delta", "response_id": run.r.id, "item_id": itemID,
			"output_index": idx, "call_id": call.CallID, "delta": chunk}, true)
	}
	c.send(map[string]any{"type": "response.function_call_arguments.done", "response_id": run.r.id, "item_id": itemID,
		"output_index": idx, "call_id": call.CallID, "name": call.Name, "arguments": call.Arguments})
	item["status"], item["arguments"] = "completed", call.Arguments
	c.send(map[string]any{"type": "response.output_item.done", "response_id": run.r.id, "output_index": idx, "item": item})
	if run.inConversation {
		c.itemDone(deepCopy(item).(map[string]any))
		c.mu.Lock()
		c.items = append(c.items, &rtItem{id: itemID, typ: "function_call", text: call.Name + "(" + call.Arguments + ")", truncateMs: -1, raw: item})
		c.mu.Unlock()
	}
	run.output = append(run.output, item)
	return true
}

// markPartial records how much assistant audio was sent for an item.
func (c *rtSession) markPartial(it *rtItem, audioBytes int, text string) {
	c.mu.Lock()
	it.audioMs = audioBytes / 2 * 1000 / SpeechRate
	it.text = text
	c.mu.Unlock()
}

func (c *rtSession) lastItemID() any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastItemIDLocked()
}

// conversationID is the response's conversation_id: the session's
// conversation, or none for out-of-band responses.
func conversationID(session string, p *rtResponseParams) any {
	if p.Conversation != nil && *p.Conversation == "none" {
		return nil
	}
	return "conv_" + session
}

// endResponse marks r as no longer active (if it still is).
func (c *rtSession) endResponse(r *rtResponse) {
	c.mu.Lock()
	if c.active == r {
		c.active = nil
	}
	c.mu.Unlock()
}
