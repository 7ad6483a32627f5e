package openaisim

import (
	"encoding/json"
	"strings"
	"time"
)

// The Gemini Live server messages (BidiGenerateContentServerMessage) the simulator sends, and
// the handling of setup and realtime input.

// gmServerMessage is one server message: one of the oneof fields, usageMetadata beside it.
type gmServerMessage struct {
	SetupComplete           *struct{}               `json:"setupComplete,omitempty"`
	ServerContent           *gmServerContent        `json:"serverContent,omitempty"`
	ToolCall                *gmToolCall             `json:"toolCall,omitempty"`
	ToolCallCancellation    *gmToolCallCancellation `json:"toolCallCancellation,omitempty"`
	GoAway                  *gmGoAway               `json:"goAway,omitempty"`
	SessionResumptionUpdate *gmResumptionUpdate     `json:"sessionResumptionUpdate,omitempty"`
	UsageMetadata           *gmUsage                `json:"usageMetadata,omitempty"`
}

// gmServerContent is BidiGenerateContentServerContent.
type gmServerContent struct {
	ModelTurn           *gmOutContent    `json:"modelTurn,omitempty"`
	GenerationComplete  bool             `json:"generationComplete,omitempty"`
	TurnComplete        bool             `json:"turnComplete,omitempty"`
	Interrupted         bool             `json:"interrupted,omitempty"`
	InputTranscription  *gmTranscription `json:"inputTranscription,omitempty"`
	OutputTranscription *gmTranscription `json:"outputTranscription,omitempty"`
}

type gmOutContent struct {
	Role  string      `json:"role,omitempty"`
	Parts []gmOutPart `json:"parts"`
}

type gmOutPart struct {
	Text       string      `json:"text,omitempty"`
	InlineData *gmOutBlob  `json:"inlineData,omitempty"`
	Call       *gmFuncCall `json:"functionCall,omitempty"`
}

type gmOutBlob struct {
	MimeType string `json:"mimeType"`
	Data     []byte `json:"data"` // base64 on the wire
}

type gmTranscription struct {
	Text     string `json:"text,omitempty"`
	Finished bool   `json:"finished,omitempty"`
}

type gmToolCall struct {
	FunctionCalls []gmFuncCall `json:"functionCalls"`
}

// gmFuncCall is a FunctionCall: args is a JSON object (a scripted argument string that is not
// one is sent as a JSON string, so clients meet malformed calls too).
type gmFuncCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type gmToolCallCancellation struct {
	IDs []string `json:"ids"`
}

type gmGoAway struct {
	TimeLeft string `json:"timeLeft"`
}

type gmResumptionUpdate struct {
	NewHandle string `json:"newHandle,omitempty"`
	Resumable bool   `json:"resumable,omitempty"`
}

type gmUsage struct {
	PromptTokenCount   int `json:"promptTokenCount"`
	ResponseTokenCount int `json:"responseTokenCount"`
	TotalTokenCount    int `json:"totalTokenCount"`
}

// onSetup checks a setup as the real API does and, after the handshake rule's latency, answers
// setupComplete (and a first resumption handle when resumption is on). A handshake rule's
// Fault.CloseCode closes the socket instead.
func (c *gmConn) onSetup(st *gmSetup, handshake *outcome) *gmCloseError {
	model, ok := strings.CutPrefix(st.Model, "models/")
	if !ok || model == "" {
		return invalidArgument("Request contains an invalid argument: model must be of the form models/{model}, got %q.", st.Model)
	}
	if !contains(c.s.gmModels, model) {
		return &gmCloseError{Code: 1008, Reason: "models/" + model + " is not found for API version v1beta, or is not supported for bidiGenerateContent. Call ListModels to see the list of available models and their supported methods."}
	}
	if gc := st.GenerationConfig; gc != nil {
		if len(gc.ResponseModalities) > 1 {
			return invalidArgument("Request contains an invalid argument: only one response modality is supported per session.")
		}
		for _, m := range gc.ResponseModalities {
			if m != "AUDIO" && m != "TEXT" {
				return invalidArgument("Invalid value at 'setup.generation_config.response_modalities[0]' (type.googleapis.com/google.ai.generativelanguage.v1beta.GenerationConfig.Modality), %q", m)
			}
		}
	}
	if st.SessionResumption != nil && st.SessionResumption.Transparent {
		return invalidArgument("Request contains an invalid argument: transparent session resumption is not supported on the Gemini API.")
	}
	var history []string
	var sess *gmSession
	if st.SessionResumption != nil && st.SessionResumption.Handle != "" {
		h, resumed, ok := c.s.resumeHandle(st.SessionResumption.Handle, st.ContextWindowCompression != nil)
		if !ok {
			return &gmCloseError{Code: 1008, Reason: "BidiGenerateContent session not found"}
		}
		history, sess = h, resumed
	} else {
		sess = c.s.newGeminiSession()
	}
	c.mu.Lock()
	c.state, c.setup, c.model, c.history, c.sess = gmSettingUp, st, model, history, sess
	c.inRate = 16000
	c.aad = true
	c.vadCfg = vadConfig{enabled: true, threshold: 0.5, prefixMs: 20, silenceMs: 500}
	if ric := st.RealtimeInputConfig; ric != nil && ric.AutomaticActivityDetection != nil {
		aad := ric.AutomaticActivityDetection
		c.aad = !aad.Disabled
		if aad.PrefixPaddingMs != nil {
			c.vadCfg.prefixMs = *aad.PrefixPaddingMs
		}
		if aad.SilenceDurationMs != nil {
			c.vadCfg.silenceMs = *aad.SilenceDurationMs
		}
	}
	c.mu.Unlock()
	var delay time.Duration
	if handshake.rule != "" {
		delay = handshake.latency.TimeToFirstToken
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if c.s.sleep(c.ctx, delay) != nil && delay > 0 {
			return
		}
		if f := handshake.fault; f.CloseCode != 0 {
			c.closeWith(f.CloseCode, closeReason(f))
			return
		}
		c.mu.Lock()
		c.state = gmReady
		c.mu.Unlock()
		c.send(&gmServerMessage{SetupComplete: &struct{}{}})
		c.offerHandle()
		c.s.mu.Lock()
		c.s.gmWakeLocked() // the lifetime learns the session's limit
		c.s.mu.Unlock()
	}()
	return nil
}

// closeReason is the reason text of a scripted close: the fault's message, or what the real
// API sends with that code.
func closeReason(f Fault) string {
	if f.Message != "" {
		return f.Message
	}
	switch f.CloseCode {
	case 1007:
		return "Request contains an invalid argument."
	case 1008:
		return "Operation is not implemented, or supported, or enabled."
	default:
		return "Internal error occurred."
	}
}

// offerHandle sends a new resumption handle for the conversation so far, when the setup asked
// for session resumption.
func (c *gmConn) offerHandle() {
	c.mu.Lock()
	on := c.setup != nil && c.setup.SessionResumption != nil
	history, sess := append([]string(nil), c.history...), c.sess
	c.mu.Unlock()
	if !on {
		return
	}
	c.send(&gmServerMessage{SessionResumptionUpdate: &gmResumptionUpdate{NewHandle: c.s.storeHandle(sess, history), Resumable: true}})
}

// onClientContent appends turns to the conversation; turnComplete asks for a model turn and,
// as on the real API, interrupts the one being generated.
func (c *gmConn) onClientContent(cc *gmClientContent) *gmCloseError {
	c.mu.Lock()
	for _, t := range cc.Turns {
		role := t.Role
		if role == "" {
			role = "user"
		}
		if role != "user" && role != "model" {
			c.mu.Unlock()
			return invalidArgument("Request contains an invalid argument: role must be user or model, got %q.", role)
		}
		c.history = append(c.history, role+": "+t.text())
	}
	active := c.active
	c.mu.Unlock()
	if cc.TurnComplete {
		if active != nil {
			active.interrupt()
		}
		c.startTurn(0)
	}
	return nil
}

// onRealtimeInput takes audio, text and activity signals.
func (c *gmConn) onRealtimeInput(ri *gmRealtimeInput) *gmCloseError {
	c.mu.Lock()
	aad := c.aad
	c.mu.Unlock()
	if (ri.ActivityStart != nil || ri.ActivityEnd != nil) && aad {
		return invalidArgument("Invalid argument: activityStart and activityEnd need automaticActivityDetection.disabled.")
	}
	if ri.Video != nil {
		c.mu.Lock()
		sess := c.sess
		c.mu.Unlock()
		c.s.markVideo(sess)
	}
	if ri.ActivityStart != nil {
		c.activityStart()
	}
	audio := ri.Audio
	if audio == nil && len(ri.MediaChunks) > 0 {
		audio = &ri.MediaChunks[0] // deprecated; all but the first are ignored, as on the real API
	}
	if audio != nil {
		rate, ok := pcmRate(audio.MimeType)
		if !ok {
			return invalidArgument("Request contains an invalid argument: unsupported audio mimeType %q (raw pcm16 little-endian, audio/pcm;rate=N).", audio.MimeType)
		}
		c.onAudio(audio.Data, rate)
	}
	if ri.Text != "" {
		c.mu.Lock()
		c.history = append(c.history, "user: "+ri.Text)
		active := c.active
		c.mu.Unlock()
		if active != nil {
			active.interrupt()
		}
		c.startTurn(0)
	}
	if ri.ActivityEnd != nil || (ri.AudioStreamEnd && aad) {
		c.activityEnd()
	}
	return nil
}

// activityStart opens a user activity; it interrupts the model's turn unless the setup's
// activityHandling is NO_INTERRUPTION.
func (c *gmConn) activityStart() {
	c.mu.Lock()
	c.inAct, c.audio = true, c.audio[:0]
	active := c.active
	interrupts := c.setup.RealtimeInputConfig == nil || c.setup.RealtimeInputConfig.ActivityHandling != "NO_INTERRUPTION"
	c.mu.Unlock()
	if active != nil && interrupts {
		active.interrupt()
	}
}

// onAudio takes input audio: into the open activity (activityStart/End), or through the
// server's VAD (automatic activity detection), which opens and closes activities itself.
func (c *gmConn) onAudio(pcm []byte, rate int) {
	c.mu.Lock()
	if rate != c.inRate {
		c.inRate, c.vad = rate, vadState{}
	}
	var events []vadEvent
	if c.aad {
		events, _ = c.vad.feed(pcm, rate/50*2, c.vadCfg)
	}
	c.mu.Unlock()
	appended := false
	take := func() {
		c.mu.Lock()
		if c.inAct && !appended {
			c.audio, appended = append(c.audio, pcm...), true
		}
		c.mu.Unlock()
	}
	for _, e := range events {
		switch e {
		case vadStarted:
			c.activityStart()
		case vadStopped:
			take()
			c.activityEnd()
		}
	}
	take()
}

// activityEnd closes the user activity: its audio becomes a user turn (transcribed; the
// transcription sent when the setup asked for it) and the model answers.
func (c *gmConn) activityEnd() {
	c.mu.Lock()
	if !c.inAct {
		c.mu.Unlock()
		return
	}
	pcm, rate := append([]byte(nil), c.audio...), c.inRate
	c.inAct, c.audio = false, c.audio[:0]
	transcribe := c.setup.InputAudioTranscription != nil
	c.mu.Unlock()
	if len(pcm) < 2 {
		return
	}
	d := time.Duration(len(pcm)/2) * time.Second / time.Duration(rate)
	o := c.s.resolve(&matchInput{endpoint: EndpointGeminiTranscription, model: c.model, audio: d, hasAudio: true, pcm: pcm})
	text := transcriptFor(&o, d)
	if transcribe && text != "" {
		c.send(&gmServerMessage{ServerContent: &gmServerContent{InputTranscription: &gmTranscription{Text: text, Finished: true}}})
	}
	c.mu.Lock()
	c.history = append(c.history, "user: "+text)
	c.mu.Unlock()
	c.startTurn(d)
}
