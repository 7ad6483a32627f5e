package discord

import (
	"fmt"
	"net/http"

	"golang.org/x/time/rate"
)

// GlobalRESTLimit is Discord's global REST budget per bot token: 50 requests per second,
// shared by every process of the bot.
// https://discord.com/developers/docs/topics/rate-limits#global-rate-limit
const GlobalRESTLimit = 50

// ProcessRESTShare is the share of the global REST budget one process may use when its shards
// are a part of all of them: the budget split by shard, so the processes of a bot together never
// pass it (a process running 2 of 4 shards gets 25 requests per second).
func ProcessRESTShare(shardsRun, shardCount int) float64 {
	if shardCount < 1 || shardsRun >= shardCount {
		return GlobalRESTLimit
	}
	return GlobalRESTLimit * float64(shardsRun) / float64(shardCount)
}

// restLimiter holds each REST request until the process's share of the global budget allows
// it, so a sharded bot's processes do not draw 429s from each other. discordgo's own limiter
// still handles the per-route buckets.
type restLimiter struct {
	lim  *rate.Limiter
	next http.RoundTripper
}

func newRESTLimiter(perSecond float64, next http.RoundTripper) *restLimiter {
	burst := max(int(perSecond), 1)
	return &restLimiter{lim: rate.NewLimiter(rate.Limit(perSecond), burst), next: next}
}

func (l *restLimiter) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := l.lim.Wait(req.Context()); err != nil {
		return nil, fmt.Errorf("discord: REST budget: %w", err)
	}
	return l.next.RoundTrip(req)
}
