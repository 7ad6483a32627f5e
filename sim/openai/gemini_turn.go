package openaisim

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"
)

// A model turn on a Gemini Live connection: serverContent with the model's audio (pcm16 24 kHz
// in inlineData parts) and its output transcription, token by token at the rule's latency;
// tool calls; then generationComplete and turnComplete. An interruption ends it with
// interrupted, then turnComplete; only what was sent stays in the conversation.

// gmGeminiOutputMime is the MIME type of the model's audio.
const gmGeminiOutputMime = "audio/pcm;rate=24000"

// gmTurn is one model turn in flight.
type gmTurn struct {
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu          sync.Mutex // guards following
	interrupted bool
}

// interrupt cuts the turn (a user activity, clientContent, text input).
func (t *gmTurn) interrupt() {
	t.mu.Lock()
	t.interrupted = true
	t.mu.Unlock()
	t.cancel()
}

func (t *gmTurn) wasInterrupted() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.interrupted
}

// startTurn starts a model turn answering the conversation so far; audio is the length of the
// user audio it answers (0 for text). It runs after the turn before it has ended.
func (c *gmConn) startTurn(audio time.Duration) {
	t := &gmTurn{done: make(chan struct{})}
	t.ctx, t.cancel = context.WithCancel(c.ctx)
	c.mu.Lock()
	prev := c.active
	c.active = t
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer t.cancel()
		defer close(t.done)
		if prev != nil {
			<-prev.done
		}
		c.runTurn(t, audio)
		c.mu.Lock()
		if c.active == t {
			c.active = nil
		}
		c.mu.Unlock()
	}()
}

// runTurn generates the turn: text and audio, then tool calls; a blocking call waits for its
// toolResponse and the model goes on with the result (at most 8 rounds).
func (c *gmConn) runTurn(t *gmTurn, audio time.Duration) {
	usage := &gmUsage{}
	for round := 0; round < 8; round++ {
		in, rec := c.turnInput(audio)
		o := c.s.resolve(in)
		rec.Rule, rec.Fault = o.rule, o.fault
		if !c.turnFaults(t, &o, rec) {
			return
		}
		pl := c.s.makePlan(&o, in.lastUser, rec.Tools, toolPolicyAuto, "")
		text := pl.text
		if pl.refusal != "" {
			text = pl.refusal
		}
		text = c.capOutput(text)
		spoken, ok := c.stream(t, text, &o, rec)
		rec.Usage = Usage{InputTokens: countTokens(in.prompt), OutputTokens: countTokens(spoken)}
		usage.PromptTokenCount += rec.Usage.InputTokens
		usage.ResponseTokenCount += rec.Usage.OutputTokens
		c.s.record(rec)
		if spoken != "" {
			c.mu.Lock()
			c.history = append(c.history, "model: "+spoken)
			c.mu.Unlock()
		}
		if !ok {
			c.endInterrupted(t)
			return
		}
		if len(pl.calls) == 0 || !c.callTools(pl.calls, rec.Tools) {
			break
		}
		select {
		case <-t.ctx.Done():
			return // the connection is closing: a blocking call cannot be interrupted
		case res := <-c.toolRes:
			c.mu.Lock()
			for _, r := range res {
				c.history = append(c.history, "function_response "+r.ID+": "+string(r.Response))
			}
			c.mu.Unlock()
		}
		audio = 0
	}
	usage.TotalTokenCount = usage.PromptTokenCount + usage.ResponseTokenCount
	c.send(&gmServerMessage{ServerContent: &gmServerContent{GenerationComplete: true}})
	c.send(&gmServerMessage{ServerContent: &gmServerContent{TurnComplete: true}, UsageMetadata: usage})
	c.offerHandle()
}

// endInterrupted ends a cut turn: toolCallCancellation for the pending non-blocking calls,
// interrupted, then turnComplete. A turn cut because the
// connection is closing sends nothing.
func (c *gmConn) endInterrupted(t *gmTurn) {
	if c.ctx.Err() != nil || !t.wasInterrupted() {
		return
	}
	// The calls the model no longer waits for (non-blocking ones still pending) are discarded.
	c.mu.Lock()
	var ids []string
	for id, blocking := range c.pending {
		if !blocking {
			ids = append(ids, id)
			delete(c.pending, id)
		}
	}
	c.mu.Unlock()
	if len(ids) > 0 {
		slices.Sort(ids)
		c.send(&gmServerMessage{ToolCallCancellation: &gmToolCallCancellation{IDs: ids}})
	}
	c.send(&gmServerMessage{ServerContent: &gmServerContent{Interrupted: true}})
	c.send(&gmServerMessage{ServerContent: &gmServerContent{TurnComplete: true}})
	c.offerHandle()
}

// turnFaults applies a response rule's faults. It reports whether the turn goes on.
func (c *gmConn) turnFaults(t *gmTurn, o *outcome, rec *Recorded) bool {
	f := o.fault
	switch {
	case f.CloseCode != 0:
		c.s.record(rec)
		c.closeWith(f.CloseCode, closeReason(f))
		return false
	case f.Status != 0:
		c.s.record(rec)
		c.closeWith(1011, "Internal error occurred.")
		return false
	case f.Timeout:
		<-t.ctx.Done()
		c.s.record(rec)
		c.endInterrupted(t)
		return false
	}
	c.writeMu.Lock()
	if f.DropAfterEvents > 0 {
		c.dropAt = c.sent + f.DropAfterEvents
	}
	if f.MalformedJSON {
		c.malformedNext = true
	}
	c.writeMu.Unlock()
	return true
}

// turnInput gathers what rules match on: the system instruction and the conversation.
func (c *gmConn) turnInput(audio time.Duration) (*matchInput, *Recorded) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.compressLocked()
	st := c.setup
	in := &matchInput{endpoint: EndpointGeminiResponse, model: c.model, audio: audio, hasAudio: audio > 0, streaming: true}
	for _, l := range c.history {
		if u, ok := strings.CutPrefix(l, "user: "); ok {
			in.lastUser = u
		}
	}
	instr := ""
	if st.SystemInstruction != nil {
		instr = st.SystemInstruction.text()
	}
	in.prompt = flatten(instr, c.history)
	var tools []Tool
	for _, tl := range st.Tools {
		for _, fd := range tl.FunctionDeclarations {
			params := fd.Parameters
			if params == nil {
				params = fd.ParametersJSONSchema
			}
			tools = append(tools, Tool{Type: "function", Name: fd.Name, Description: fd.Description, Parameters: params})
			in.tools = append(in.tools, fd.Name)
		}
	}
	rec := &Recorded{Endpoint: EndpointGeminiResponse, RequestID: c.requestID, Method: "WS", Path: GeminiLivePath,
		Model: c.model, Instructions: instr, LastUserText: in.lastUser, Prompt: in.prompt, Tools: tools,
		AudioDuration: audio, Stream: true, At: c.s.now(), Voice: voiceName(st)}
	return in, rec
}

// voiceName reads setup.generationConfig.speechConfig.voiceConfig.prebuiltVoiceConfig.voiceName.
func voiceName(st *gmSetup) string {
	if st.GenerationConfig == nil || st.GenerationConfig.SpeechConfig == nil {
		return ""
	}
	var sc struct {
		VoiceConfig struct {
			PrebuiltVoiceConfig struct {
				VoiceName string `json:"voiceName"`
			} `json:"prebuiltVoiceConfig"`
		} `json:"voiceConfig"`
	}
	_ = json.Unmarshal(st.GenerationConfig.SpeechConfig, &sc)
	return sc.VoiceConfig.PrebuiltVoiceConfig.VoiceName
}

// audioOut reports whether the session answers in audio (the default) rather than text.
func (c *gmConn) audioOut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	gc := c.setup.GenerationConfig
	return gc == nil || len(gc.ResponseModalities) == 0 || gc.ResponseModalities[0] == "AUDIO"
}

// capOutput cuts text to the setup's generationConfig.maxOutputTokens (0: no limit), as the
// model stops generating there: a turn of the hearing banter runs on Gemini (maxOutputTokens 1)
// is one token, not a spoken answer.
func (c *gmConn) capOutput(text string) string {
	c.mu.Lock()
	gc := c.setup.GenerationConfig
	c.mu.Unlock()
	if gc == nil || gc.MaxOutputTokens <= 0 {
		return text
	}
	if toks := tokens(text); len(toks) > gc.MaxOutputTokens {
		return strings.Join(toks[:gc.MaxOutputTokens], "")
	}
	return text
}

// transcribesOutput reports whether the setup asked for the output transcription.
func (c *gmConn) transcribesOutput() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.setup.OutputAudioTranscription != nil
}

// stream sends text token by token: with audio output, each token's share of the synthesized
// speech in inlineData parts of ≤ 200 ms (and the token as outputTranscription when asked
// for); with text output, text parts. It returns what was sent and false when the turn was cut.
func (c *gmConn) stream(t *gmTurn, text string, o *outcome, rec *Recorded) (string, bool) {
	if text == "" {
		return "", t.ctx.Err() == nil
	}
	audioOut, transcribe := c.audioOut(), c.transcribesOutput()
	var pcm []byte
	if audioOut {
		if o.reply.Audio != nil {
			pcm = o.reply.Audio[:len(o.reply.Audio)&^1]
		} else {
			pcm = Synthesize(text, rec.Voice, 1)
		}
		rec.AudioBytes = len(pcm)
	}
	pc := c.s.newPacer(t.ctx, o.latency, &rec.Injected)
	toks := tokens(text)
	sentAudio := 0
	var spoken strings.Builder
	for i, tok := range toks {
		if !pc.token() {
			return spoken.String(), false
		}
		spoken.WriteString(tok)
		if !audioOut {
			c.send(&gmServerMessage{ServerContent: &gmServerContent{ModelTurn: &gmOutContent{Role: "model", Parts: []gmOutPart{{Text: tok}}}}})
			continue
		}
		upto := len(pcm) * (i + 1) / len(toks) &^ 1
		for sentAudio < upto {
			end := min(upto, sentAudio+9600) // ≤ 200 ms a part
			sc := &gmServerContent{ModelTurn: &gmOutContent{Role: "model", Parts: []gmOutPart{{InlineData: &gmOutBlob{MimeType: gmGeminiOutputMime, Data: pcm[sentAudio:end]}}}}}
			c.send(&gmServerMessage{ServerContent: sc})
			sentAudio = end
		}
		if transcribe {
			c.send(&gmServerMessage{ServerContent: &gmServerContent{OutputTranscription: &gmTranscription{Text: tok}}})
		}
	}
	return text, true
}

// callTools sends the model's function calls as one toolCall. It reports whether one of them
// is blocking (declared without behavior NON_BLOCKING): the turn then waits for its response.
func (c *gmConn) callTools(calls []ToolCall, tools []Tool) bool {
	nonBlocking := map[string]bool{}
	c.mu.Lock()
	for _, tl := range c.setup.Tools {
		for _, fd := range tl.FunctionDeclarations {
			nonBlocking[fd.Name] = fd.Behavior == "NON_BLOCKING"
		}
	}
	if c.pending == nil {
		c.pending = map[string]bool{}
	}
	tc := &gmToolCall{}
	blocking := false
	for _, call := range calls {
		args := json.RawMessage(call.Arguments)
		if !json.Valid(args) {
			args, _ = json.Marshal(call.Arguments)
		}
		tc.FunctionCalls = append(tc.FunctionCalls, gmFuncCall{ID: call.CallID, Name: call.Name, Args: args})
		c.pending[call.CallID] = !nonBlocking[call.Name]
		blocking = blocking || !nonBlocking[call.Name]
		c.history = append(c.history, "function_call "+call.Name+"("+call.Arguments+")")
	}
	if blocking && c.toolRes == nil {
		c.toolRes = make(chan []gmFunctionResponse, 1)
	}
	c.mu.Unlock()
	c.send(&gmServerMessage{ToolCall: tc})
	return blocking
}

// onToolResponse answers pending calls. Every id must name a pending call. When the last
// blocking call is answered, the responses resume the waiting turn; a response to a NON_BLOCKING call joins the
// conversation and, unless its scheduling is SILENT, starts a turn when none is running
// (INTERRUPT cuts the running one).
func (c *gmConn) onToolResponse(tr *gmToolResponse) *gmCloseError {
	c.mu.Lock()
	var later []gmFunctionResponse
	for _, r := range tr.FunctionResponses {
		b, ok := c.pending[r.ID]
		if r.ID == "" || !ok {
			c.mu.Unlock()
			return invalidArgument("Request contains an invalid argument: no pending function call has id %q.", r.ID)
		}
		delete(c.pending, r.ID)
		if b {
			c.answered = append(c.answered, r)
		} else {
			later = append(later, r)
		}
	}
	active := c.active
	for _, r := range later {
		c.history = append(c.history, "function_response "+r.ID+": "+string(r.Response))
	}
	var resume []gmFunctionResponse
	if !c.blockedLocked() && len(c.answered) > 0 {
		resume, c.answered = c.answered, nil
	}
	toolRes := c.toolRes
	c.mu.Unlock()
	if resume != nil {
		toolRes <- resume // the turn waits for it; nothing else sends until it has read it
	}
	started := active != nil
	for _, r := range later {
		switch sched := scheduling(r); {
		case sched == "SILENT":
		case !started:
			c.startTurn(0)
			started = true
		case sched == "INTERRUPT" && active != nil:
			active.interrupt()
			c.startTurn(0)
			active = nil
		}
	}
	return nil
}

// scheduling is a function response's scheduling: the field, or inside response as the docs
// show it; WHEN_IDLE when absent.
func scheduling(r gmFunctionResponse) string {
	if r.Scheduling != "" {
		return r.Scheduling
	}
	var in struct {
		Scheduling string `json:"scheduling"`
	}
	if json.Unmarshal(r.Response, &in) == nil && in.Scheduling != "" {
		return in.Scheduling
	}
	return "WHEN_IDLE"
}
