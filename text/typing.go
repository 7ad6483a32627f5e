package text

import (
	"context"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
)

// typingInterval re-sends the typing indicator before Discord's 10 s expiry.
const typingInterval = 8 * time.Second

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
// request already under way is let finish (so even a fast reply shows it once); the goroutine
// belongs to the service's wait group.
func (s *Service) keepTyping(ctx context.Context, channelID string) func() {
	stop := make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(typingInterval)
		defer t.Stop()
		for {
			if err := s.opts.Discord.ChannelTyping(channelID, discordgo.WithContext(ctx)); err != nil && ctx.Err() == nil {
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
	return func() { once.Do(func() { close(stop) }) }
}
