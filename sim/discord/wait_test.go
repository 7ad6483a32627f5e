package discordsim

import "context"

// The waits of package simtest, for this package's own tests (which cannot
// import simtest: it imports this package). Keep the two in step.

// From matches messages authored by u (for WaitMessage).
func from(u UserID) func(Message) bool {
	return func(m Message) bool { return m.Author == u }
}

// InChannel matches messages in channel c (for WaitMessage).
func inChannel(c ChannelID) func(Message) bool {
	return func(m Message) bool { return m.ChannelID == c }
}

// WaitMessage waits until a message created by a client (Sent, not Post)
// satisfies match, scanning from the first such message, and returns it.
func waitMessage(ctx context.Context, s *Server, match func(Message) bool) (Message, error) {
	ms, err := waitMessages(ctx, s, 1, match)
	if err != nil {
		return Message{}, err
	}
	return ms[0], nil
}

// WaitMessages waits until n messages created by clients (Sent) satisfy
// match and returns the first n of them, in order. WaitMessages(ctx, s, 2,
// from(bot)) is "the bot's second message".
func waitMessages(ctx context.Context, s *Server, n int, match func(Message) bool) ([]Message, error) {
	var found []Message
	next := 0
	err := s.Await(ctx, func() bool {
		for _, m := range s.SentSince(next) {
			next++
			if len(found) < n && match(m) {
				found = append(found, m)
			}
		}
		return len(found) >= n
	})
	return found, err
}

// WaitTyping waits for a typing event in channel c by user u.
func waitTyping(ctx context.Context, s *Server, c ChannelID, u UserID) (TypingEvent, error) {
	var found TypingEvent
	err := s.Await(ctx, func() bool {
		for _, t := range s.Typing() {
			if t.Channel == c && t.User == u {
				found = t
				return true
			}
		}
		return false
	})
	return found, err
}

// WaitGateway waits until the n-th (from 1) recorded gateway event of the
// given kind, counted from the start, and returns it.
func waitGateway(ctx context.Context, s *Server, kind GatewayEventKind, n int) (GatewayEvent, error) {
	var found GatewayEvent
	err := s.Await(ctx, func() bool {
		seen := 0
		for _, e := range s.GatewayEvents() {
			if e.Kind == kind {
				if seen++; seen == n {
					found = e
					return true
				}
			}
		}
		return false
	})
	return found, err
}

// WaitReady waits until a session of user u is identified or resumed and
// has a connection attached.
func waitReady(ctx context.Context, s *Server, u UserID) error {
	return s.Await(ctx, func() bool { return s.Connected(u) })
}

// WaitInteractionResponse waits for the bot's callback to interaction id.
func waitInteractionResponse(ctx context.Context, s *Server, id InteractionID) (InteractionResponse, error) {
	var r InteractionResponse
	err := s.Await(ctx, func() bool {
		var ok bool
		r, ok = s.InteractionResponse(id)
		return ok
	})
	return r, err
}
