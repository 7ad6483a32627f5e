package text

import (
	"context"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"
)

// A catch-up's batch (catchup_batch.go) stores a page's fresh messages before the pipeline
// handles them, so it writes them marked unhandled (store.Message.Unhandled). A mark is
// cleared once the pipeline is done with its message: at once when ingest declines it
// (filtered, a duplicate, denied by Stage A), for all of a page in one write after the page;
// else when its turn ends (answered, skipped, failed, denied before generation, shed). One
// cut short by shutdown, or by a crash, stays.
//
// A process whose catch-up of a channel starts from the store (from=stored: no position of its
// own there) asks for the channel's marked messages first. With none, it starts after the
// newest stored message, as before. With some, it starts just before the oldest of them
// (from=unhandled): each marked one is fed through the pipeline again, without being stored
// twice (nor offered to memory extraction again: its requeue from the channel's memory cursor
// covers it); the other messages up to the newest stored one were handled by the earlier
// process and are passed over (neither stored nor handled again: an open turn among them is
// turn recovery's, turns.go); what is newer is caught up as usual.

// unhandledLimit bounds the marked messages a catch-up takes up per channel (oldest first):
// one page in flight and the channel's queue hold far fewer.
const unhandledLimit = seenPerChannel

// takeUp is what a catch-up from the store knows of what an earlier process did not finish:
// the marked messages, and the newest stored one, at or before which every other message was
// handled.
type takeUp struct {
	marked map[string]bool // ids still marked unhandled; a caught-up one is deleted
	stored string          // the newest stored message's id
}

// unhandledStart returns where a catch-up from the store starts when the store holds messages
// of the channel marked unhandled, within the window it answers (after floor: older ones would
// be declined stale), after the message before the oldest of them, with what it takes up; ok
// is false when there are none (or they cannot be read: logged).
func (s *Service) unhandledStart(channelID, newest string, floor time.Time) (catchUpStart, bool) {
	ids, err := s.opts.Store.UnhandledMessages(s.ctx, channelID, floor, unhandledLimit)
	if err != nil {
		s.logger.Warn("store_failed", "op", "unhandled_messages", "channel_id", channelID, "error", err.Error())
		return catchUpStart{}, false
	}
	if len(ids) == 0 {
		return catchUpStart{}, false
	}
	oldest, err := strconv.ParseUint(ids[0], 10, 64)
	if err != nil || oldest == 0 {
		return catchUpStart{}, false
	}
	t := &takeUp{marked: make(map[string]bool, len(ids)), stored: newest}
	for _, id := range ids {
		t.marked[id] = true
	}
	return catchUpStart{after: strconv.FormatUint(oldest-1, 10), from: "unhandled", takeUp: t}, true
}

// handledBefore reports whether a fetched message was handled by an earlier process: stored
// (at or before the newest stored message when the catch-up started) and not marked. It moves
// the channel's position past it, as a start after the newest stored message would have.
func (r *catchUpRun) handledBefore(m *discordgo.Message) bool {
	t := r.takeUp
	if t == nil || t.marked[m.ID] || compareIDs(m.ID, t.stored) > 0 {
		return false
	}
	r.cs.pass(m.ID)
	return true
}

// markedBefore reports whether a fetched message is one an earlier process stored marked
// unhandled, and forgets the mark (it is caught up now).
func (r *catchUpRun) markedBefore(id string) bool {
	if r.takeUp == nil || !r.takeUp.marked[id] {
		return false
	}
	delete(r.takeUp.marked, id)
	r.takenUp++
	return true
}

// leftMarked returns the marked messages the catch-up did not meet: deleted from the channel
// meanwhile, when it read the channel to its end, or older than where it stopped. Their marks
// are cleared: no catch-up will meet them.
func (r *catchUpRun) leftMarked(last string) []string {
	if r.takeUp == nil {
		return nil
	}
	var ids []string
	for id := range r.takeUp.marked {
		if !r.truncated || compareIDs(id, last) < 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

// turnsHandled clears the unhandled marks of ts's messages (those a catch-up stored before the
// pipeline handled them): their turns have ended.
func (s *Service) turnsHandled(ts ...*turn) {
	var ids []string
	for _, t := range ts {
		if t.unhandled {
			t.unhandled = false
			ids = append(ids, t.msg.ID)
		}
	}
	s.markHandled(ids)
}

// markHandled clears the unhandled marks of messages, in one write; it outlives a shutdown's
// cancel (the pipeline is done with them).
func (s *Service) markHandled(ids []string) {
	if len(ids) == 0 {
		return
	}
	if err := s.opts.Store.MarkHandled(context.WithoutCancel(s.ctx), ids); err != nil {
		s.logger.Warn("store_failed", "op", "mark_handled", "message_ids", ids, "error", err.Error())
	}
}

// pass moves the channel's catch-up position past id without counting it seen (turn recovery
// may still feed it through the pipeline).
func (c *channelState) pass(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastSeen == "" || compareIDs(id, c.lastSeen) > 0 {
		c.lastSeen = id
	}
}
