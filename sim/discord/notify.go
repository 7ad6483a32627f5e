package discordsim

// Changed returns a channel that is closed at the next change of the
// simulated world or of what it recorded (a message created, edited or
// deleted, typing, a voice state, a gateway event, a REST call, Close).
// Observers outside the package (the control API's event stream) wait on it
// and then read what they follow; call it again after each wake-up. Await is
// the same wait for a condition.
func (s *Server) Changed() <-chan struct{} {
	ch, _ := s.changes.wait()
	return ch
}
