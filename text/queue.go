package text

import (
	"slices"
	"time"
)

// backlogFactor bounds a channel's queue under pressure: past activity.queueCapacity only
// addressed turns are queued, up to backlogFactor × queueCapacity; an addressed turn beyond
// that is answered at once with a short "swamped" notice instead of waiting.
const backlogFactor = 4

// swampedNotice answers an addressed turn that arrives when the channel's backlog is full.
const swampedNotice = "I'm swamped right now, one moment — I'll catch up with the channel shortly."

// enqueue adds an admitted turn to its channel's queue, starting the channel's worker when
// idle. The queue holds activity.queueCapacity turns; when it is full, unaddressed turns are
// shed first (the new one, or the oldest queued one to make room for an addressed turn), and
// an addressed turn is never shed: it is queued past the capacity (the worker then coalesces the
// whole backlog into one reply), and past backlogFactor × capacity it is answered with a short
// notice. Every shed turn is logged and counted by reason.
func (s *Service) enqueue(cs *channelState, t *turn) {
	cfg := s.cfg()
	capacity := cfg.Activity.QueueCapacity
	// The prompt budget is read here, once per turn (the worker brings it up to date).
	// Typing shows only for a turn that will be answered now: addressed, admitted, and with a
	// prompt budget left (a rate-limited turn shows nothing). Asked before cs.mu is taken.
	typing := s.promptAllowed(s.ctx, cfg, cs, t, t.addressed(), s.now()).ok && t.addressed()
	// The enqueuer holds a count on the wait group from the closed check on, so that Shutdown
	// (which sets closed under the same lock, then waits) cannot return before the worker or
	// typing goroutine this call may start has been added; a started worker inherits it.
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.shed(t, "shutting_down")
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()

	cs.mu.Lock()
	t.seq = cs.seq
	var shed *turn
	shedWhy := "queue_full"
	swamped := false
	if len(cs.pending) >= capacity {
		victim := slices.IndexFunc(cs.pending, func(p *turn) bool { return !p.addressed() })
		switch {
		case !t.addressed():
			shed = t
		case victim >= 0:
			shed, shedWhy = cs.pending[victim], "displaced_by_addressed"
			cs.pending = slices.Delete(cs.pending, victim, victim+1)
		case len(cs.pending) >= backlogFactor*capacity:
			swamped = true
		}
	}
	if shed != t && !swamped {
		cs.pending = append(cs.pending, t)
		if typing {
			// Started before the worker can take the turn, so that the worker's answer always
			// stops it (started after, it could outlive a fast answer and run until shutdown).
			s.startTypingLocked(cs)
		}
	}
	start := !cs.running && len(cs.pending) > 0
	if start {
		cs.running = true
	}
	depth := len(cs.pending)
	cs.mu.Unlock()

	s.opts.Metrics.queueDepth(depth)
	if shed != nil {
		s.shed(shed, shedWhy)
		s.turnsHandled(shed)
	}
	if swamped {
		s.swamped(t, depth)
	}
	if start {
		go s.work(cs) // inherits the enqueuer's count
	} else {
		cs.wake()
		s.wg.Done()
	}
}

// swamped answers an addressed turn that found the backlog full with a short notice, off the
// gateway goroutine.
func (s *Service) swamped(t *turn, depth int) {
	s.opts.Metrics.reply("swamped")
	s.logger.Warn("turn_swamped", "message_id", t.msg.ID, "channel_id", t.msg.ChannelID, "user_id", t.msg.AuthorID,
		"queue_depth", depth)
	if !s.spawn(func() {
		s.closeTurns([]*turn{t}, outcomeOf(s.sendNotice(s.ctx, t, swampedNotice)))
		s.turnsHandled(t)
	}) {
		s.shed(t, "shutting_down")
	}
}

// shed logs and counts a turn that will not be answered.
func (s *Service) shed(t *turn, why string) {
	s.opts.Metrics.shed(t.addressed(), why)
	level := s.logger.Info
	if t.addressed() {
		level = s.logger.Error
	}
	level("turn_shed", "reason", why, "addressed", t.addressed(), "message_id", t.msg.ID,
		"channel_id", t.msg.ChannelID, "user_id", t.msg.AuthorID)
}

// work drains one channel's queue: it waits for the coalescing window of the oldest pending
// turn (closing early at replyCoalesceMaxMessages or on shutdown), takes the batch and answers
// it, until the queue is empty. The first time a channel is worked, its history is backfilled
// from REST, before any turn of it is answered.
func (s *Service) work(cs *channelState) {
	defer s.wg.Done()
	s.backfillOnce(cs)
	for {
		batch := s.nextBatch(cs)
		if batch == nil {
			return
		}
		s.answer(cs, batch)
	}
}

// nextBatch blocks until a batch is due and returns it, or returns nil (and marks the worker
// stopped) when the queue is empty.
func (s *Service) nextBatch(cs *channelState) []*turn {
	for {
		cfg := s.cfg()
		window := time.Duration(cfg.Activity.ReplyCoalesceWindowSeconds * float64(time.Second))
		maxN := cfg.Activity.ReplyCoalesceMaxMessages

		cs.mu.Lock()
		if len(cs.pending) == 0 {
			cs.running = false
			cs.mu.Unlock()
			return nil
		}
		s.mu.Lock()
		closing := s.closed
		s.mu.Unlock()
		wait := window - time.Since(cs.pending[0].arrived)
		if wait <= 0 || len(cs.pending) >= maxN || closing {
			n := min(len(cs.pending), maxN)
			if len(cs.pending) > cfg.Activity.QueueCapacity {
				n = len(cs.pending) // under pressure the whole backlog becomes one reply
			}
			batch := append([]*turn(nil), cs.pending[:n]...)
			cs.pending = append(cs.pending[:0], cs.pending[n:]...)
			cs.mu.Unlock()
			return batch
		}
		cs.mu.Unlock()

		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-cs.wakeCh:
			timer.Stop()
		case <-s.ctx.Done():
			timer.Stop()
		}
	}
}
