package world

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"sync"
	"time"
)

// Distinct identifier types, all snowflakes rendered as decimal strings the
// way Discord puts them on the wire.
type (
	// UserID identifies a user (human or bot).
	UserID string
	// GuildID identifies a guild. The guild's @everyone role has the same id.
	GuildID string
	// ChannelID identifies a channel; a thread is a channel too.
	ChannelID string
	// MessageID identifies a message.
	MessageID string
	// RoleID identifies a role.
	RoleID string
	// CommandID identifies an application command.
	CommandID string
	// InteractionID identifies an interaction.
	InteractionID string
	// AttachmentID identifies an uploaded file.
	AttachmentID string
)

// discordEpoch is the first millisecond of 2015, Discord's snowflake epoch.
// https://discord.com/developers/docs/reference#snowflakes
const discordEpoch = 1420070400000

// snowflakes generates ids with Discord's layout:
//
//	 63                      22 21    17 16    12 11         0
//	+--------------------------+--------+--------+------------+
//	| ms since 2015-01-01 (42) | worker | process| increment  |
//	+--------------------------+--------+--------+------------+
//
// Ids are strictly increasing even when the clock stands still or goes back.
type snowflakes struct {
	now func() time.Time

	mu   sync.Mutex // guards following
	last uint64
}

func (g *snowflakes) next() uint64 {
	ms := max(g.now().UnixMilli()-discordEpoch, 1) // a clock before 2015 still gives valid ids
	id := uint64(ms)<<22 | 1<<17 | 1<<12           // worker 1, process 1
	g.mu.Lock()
	defer g.mu.Unlock()
	if id <= g.last {
		id = g.last + 1
	}
	g.last = id
	return id
}

func (g *snowflakes) nextString() string { return strconv.FormatUint(g.next(), 10) }

// nextNewMillisecond is an id whose timestamp is later than every id so far: guilds created
// one after another then fall on different shards ((id >> 22) % shards), as guilds created at
// different times do on Discord, instead of all on the shard of one millisecond.
func (g *snowflakes) nextNewMillisecond() string {
	ms := uint64(max(g.now().UnixMilli()-discordEpoch, 1))
	g.mu.Lock()
	defer g.mu.Unlock()
	if last := g.last >> 22; ms <= last {
		ms = last + 1
	}
	g.last = ms<<22 | 1<<17 | 1<<12
	return strconv.FormatUint(g.last, 10)
}

// SnowflakeTime returns the creation time encoded in a snowflake id, or the
// zero time when id is not a number.
func SnowflakeTime(id string) time.Time {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(int64(n>>22) + discordEpoch).UTC()
}

// SnowflakeLess orders decimal snowflakes numerically (what ids sort by).
func SnowflakeLess(a, b string) bool {
	x, _ := strconv.ParseUint(a, 10, 64)
	y, _ := strconv.ParseUint(b, 10, 64)
	return x < y
}

// RandomHex returns n random bytes as hex (session ids, voice tokens).
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// makeToken builds a token shaped like Discord's:
// base64(user id) "." base64(timestamp) "." random. Such tokens start with
// "MT", never with "bot" or "bearer", which discord.js would strip.
func makeToken(id UserID) string {
	enc := base64.RawURLEncoding
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	return enc.EncodeToString([]byte(id)) + ".Gsim00." + enc.EncodeToString(b)
}
