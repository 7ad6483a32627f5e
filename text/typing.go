package text

import (
	"context"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
)

// typingInterval re-sends the typing indicator before Discord's 10 s expiry.
const typingInterval = 8 * time.Second

// typingRequestTimeout bounds one typing request, and so how long stopping the indicator can
// hold the reply back.
const typingRequestTimeout = 3 * time.Second

// startTyping shows the typing indicator in the channel until stopTyping; it is started when
// an addressed turn is queued, so people see the bot at work through the coalescing window.
func (s *Service) startTyping(cs *channelState) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	s.startTypingLocked(cs)
}

// startTypingLocked is startTyping with cs.mu held.
func (s *Service) startTypingLocked(cs *channelState) {
	if cs.typingStop == nil {
		cs.typingStop = s.keepTyping(s.ctx, cs.id)
	}
}

// stopTyping ends the channel's typing indicator, if any.
func (s *Service) stopTyping(cs *channelState) {
	cs.mu.Lock()
	stop := cs.typingStop
	cs.typingStop = nil
	cs.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// keepTyping shows the typing indicator until the returned function is called. A typing
// request already under way is let finish, and the function returns only once it has (at most
// typingRequestTimeout): a reply sent after it is never followed by a typing request that
// arrives late and shows the bot typing again for 10 s. So even a fast reply shows it once.
// The goroutine belongs to the service's wait group.
func (s *Service) keepTyping(ctx context.Context, channelID string) func() {
	stop, done := make(chan struct{}), make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(done)
		t := time.NewTicker(typingInterval)
		defer t.Stop()
		for {
			rctx, cancel := context.WithTimeout(ctx, typingRequestTimeout)
			err := s.opts.Discord.ChannelTyping(channelID, discordgo.WithContext(rctx))
			cancel()
			if err != nil && ctx.Err() == nil {
				s.logger.Debug("typing_failed", "channel_id", channelID, "error", err.Error())
			}
			select {
			case <-ctx.Done():
				return
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(stop) })
		<-done
	}
}
