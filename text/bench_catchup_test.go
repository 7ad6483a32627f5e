package text_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/banterbot/banter/store"
)

// benchCatchUpPages is how many full pages of missed messages each catch-up reads.
const benchCatchUpPages = 5

// BenchmarkCatchUp measures a restart's catch-up of benchCatchUpPages pages (100 messages
// each) missed in one channel, against the Discord simulator and a real SQLite store: one
// operation is a process start (session, GUILD_CREATE) until its catch-up is logged done.
// Shapes: "stale", messages older than text.catchUpMaxAgeMinutes (stored, never answered), and
// "fresh", members' chatter within it (each through the pipeline); "none" is a start with
// nothing missed (the fixed cost of an operation). Arms: "batched", a page
// stored in one write (catchup_batch.go), and "one_by_one", the same run on a store whose
// batch write fails, so that every message is stored by its own write (the path before
// batching, and the fallback): the baseline, measured in the same run.
//
//	go test -run '^$' -bench CatchUp -benchtime 3x ./text
func BenchmarkCatchUp(b *testing.B) {
	for _, shape := range []string{"none", "stale", "fresh"} {
		for _, arm := range []string{"batched", "one_by_one"} {
			pages := benchCatchUpPages
			if shape == "none" {
				if arm != "batched" {
					continue
				}
				pages = 0
			}
			b.Run(shape+"/"+arm, func(b *testing.B) {
				h := newHarness(b, nil)
				// A message stored live: each catch-up starts after the newest stored one.
				h.waitStored(h.post(h.bob, "before").ID, "saved", func(store.Message) bool { return true })
				if arm == "one_by_one" {
					h.wrapStore = func(st store.Store) store.Store { return failingBatches{st} }
				}
				b.ResetTimer()
				for i := range b.N {
					b.StopTimer()
					h.shutdown()
					for j := range pages * 100 {
						h.post(h.bob, "filler "+strconv.Itoa(i)+" "+strconv.Itoa(j))
					}
					if shape == "stale" {
						h.clock.Advance(20 * time.Minute)
					}
					b.StartTimer()
					h.start() // returns once the channel's catch-up is logged done
				}
				b.StopTimer()
				if pages > 0 {
					b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N*pages*100), "ms/msg")
				}
			})
		}
	}
}
