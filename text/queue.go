package text

import (
	"time"
)

// enqueue adds an admitted turn to its channel's queue, starting the channel's worker when
// idle. The queue is bounded by activity.queueCapacity: when full, an unaddressed turn is shed
// (the new one, or the oldest queued one to make room for an addressed turn). Every shed turn is
// logged; an addressed turn is only shed when the queue holds nothing but addressed turns, and
// then it is logged as an error.
func (s *Service) enqueue(cs *channelState, t *turn) {
	capacity := s.cfg().Activity.QueueCapacity
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
	if len(cs.pending) >= capacity {
		victim := -1
		for i, p := range cs.pending {
			if !p.addressed() {
				victim = i
				break
			}
		}
		switch {
		case !t.addressed():
			shed = t
		case victim >= 0:
			shed = cs.pending[victim]
			cs.pending = append(cs.pending[:victim], cs.pending[victim+1:]...)
		default:
			shed = cs.pending[0]
			cs.pending = cs.pending[1:]
		}
	}
	if shed != t {
		cs.pending = append(cs.pending, t)
		if t.addressed() {
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
		s.shed(shed, "queue_full")
	}
	if start {
		go s.work(cs) // inherits the enqueuer's count
	} else {
		cs.wake()
		s.wg.Done()
	}
}

// shed logs and counts a turn that will not be answered.
func (s *Service) shed(t *turn, why string) {
	s.opts.Metrics.shed(t.addressed())
	level := s.logger.Info
	if t.addressed() {
		level = s.logger.Error
	}
	level("turn_shed", "reason", why, "addressed", t.addressed(), "message_id", t.msg.ID,
		"channel_id", t.msg.ChannelID, "user_id", t.msg.AuthorID)
}

// work drains one channel's queue: it waits for the coalescing window of the oldest pending
// turn (closing early at replyCoalesceMaxMessages or on shutdown), takes the batch and answers
// it, until the queue is empty.
func (s *Service) work(cs *channelState) {
	defer s.wg.Done()
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
