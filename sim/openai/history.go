package openaisim

import (
	"fmt"
)

// maxStored bounds how many responses are kept for previous_response_id.
const maxStored = 10000

// storedResponse is what a stored response contributes to a later request
// that names it in previous_response_id: its whole conversation so far.
type storedResponse struct {
	lines []string
	calls map[string]bool // function call ids it (or its history) made
}

// storeResponse keeps a response for previous_response_id (store: true, the
// API default). The history includes the request's own (possibly chained)
// input lines and the reply's output.
func (s *Server) storeResponse(id string, p *prompt, pl *plan) {
	st := &storedResponse{calls: map[string]bool{}}
	st.lines = append(st.lines, p.lines...)
	if pl.refusal != "" {
		st.lines = append(st.lines, "assistant: "+pl.refusal)
	} else if pl.text != "" {
		st.lines = append(st.lines, "assistant: "+pl.text)
	}
	for _, c := range pl.calls {
		st.lines = append(st.lines, fmt.Sprintf("function_call %s(%s)", c.Name, c.Arguments))
		st.calls[c.CallID] = true
	}
	s.mu.Lock()
	if prev := p.previous; prev != nil {
		for id := range prev.calls {
			st.calls[id] = true
		}
	}
	if len(s.stored) >= maxStored { // bound memory in long standalone runs
		for k := range s.stored {
			delete(s.stored, k)
			break
		}
	}
	s.stored[id] = st
	s.mu.Unlock()
}

// applyPrevious prepends a stored response's conversation to the prompt and
// checks that function_call_output items answer calls made there.
func (s *Server) applyPrevious(id string, p *prompt) error {
	s.mu.Lock()
	prev := s.stored[id]
	s.mu.Unlock()
	if prev == nil {
		return reqErr("previous_response_id", "Previous response with id '%s' not found.", id)
	}
	for _, cid := range p.unmatched {
		if !prev.calls[cid] {
			return reqErr("input", "No tool call found for function call output with call_id %s.", cid)
		}
	}
	p.previous = prev
	p.lines = append(append([]string(nil), prev.lines...), p.lines...)
	p.flat = flatten(p.instructions, p.lines) // instructions do not carry over, as on OpenAI
	return nil
}
