package text

// seenIDs is a bounded set of message ids, forgetting the oldest first.
type seenIDs struct {
	set  map[string]struct{}
	ring []string
	next int
}

// add reports whether id is new, remembering it.
func (r *seenIDs) add(id string) bool {
	if r.set == nil {
		r.set = make(map[string]struct{}, seenPerChannel)
		r.ring = make([]string, 0, seenPerChannel)
	}
	if _, ok := r.set[id]; ok {
		return false
	}
	if len(r.ring) < seenPerChannel {
		r.ring = append(r.ring, id)
	} else {
		delete(r.set, r.ring[r.next])
		r.ring[r.next] = id
		r.next = (r.next + 1) % seenPerChannel
	}
	r.set[id] = struct{}{}
	return true
}

func (r *seenIDs) has(id string) bool {
	_, ok := r.set[id]
	return ok
}

// firstSight reports whether this is the first time the channel sees message id, and moves
// the channel's catch-up position past it.
func (c *channelState) firstSight(id, guildID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.seenIDs.add(id) {
		return false
	}
	if c.lastSeen == "" || compareIDs(id, c.lastSeen) > 0 {
		c.lastSeen = id
	}
	if guildID != "" {
		c.guildID = guildID
	}
	return true
}

func (c *channelState) seen(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seenIDs.has(id)
}

// position is where a catch-up starts: the newest message seen, and the channel's guild.
func (c *channelState) position() (lastSeen, guildID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastSeen, c.guildID
}

// note records the channel's guild and, when none is cached, its info (from a GUILD_CREATE).
func (c *channelState) note(guildID string, info channelInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.guildID == "" {
		c.guildID = guildID
	}
	if c.info == nil {
		c.info = &info
	}
}
