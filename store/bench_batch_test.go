package store

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkSaveMessages measures storing one catch-up page (100 messages) on each driver: by
// SaveMessages (one transaction) against the baseline measured in the same run, one SaveMessage
// per message (one transaction each). One operation is one page. "batch_marked" is the page as
// a catch-up writes its fresh messages (marked unhandled) and then clears the marks once the
// pipeline has declined them (MarkHandled, one statement): the cost of the marks against
// "batch".
//
//	go test -run '^$' -bench SaveMessages ./store
func BenchmarkSaveMessages(b *testing.B) {
	const page = 100
	drivers := map[string]func(b *testing.B) Store{
		"sqlite": func(b *testing.B) Store {
			s, err := Open(context.Background(), filepath.Join(b.TempDir(), "banter.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		},
		"postgres": func(b *testing.B) Store {
			if pgCluster == nil {
				b.Skip("no PostgreSQL server binaries")
			}
			dsn, err := pgCluster.NewDatabase(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			s, err := OpenPostgres(context.Background(), dsn, PostgresOptions{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		},
	}
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	pageOf := func(i int) []Message {
		ms := make([]Message, page)
		for j := range ms {
			n := i*page + j
			ms[j] = Message{ID: strconv.Itoa(1_000_000 + n), ChannelID: "c", GuildID: "g", AuthorID: "u", AuthorName: "bob",
				Content: "filler number " + strconv.Itoa(n) + " of the missed conversation", CreatedAt: base.Add(time.Duration(n) * time.Second)}
		}
		return ms
	}
	for _, driver := range []string{"sqlite", "postgres"} {
		for _, arm := range []string{"batch", "batch_marked", "one_by_one"} {
			b.Run(driver+"/"+arm, func(b *testing.B) {
				s := drivers[driver](b)
				ctx := context.Background()
				b.ResetTimer()
				for i := range b.N {
					ms := pageOf(i)
					switch arm {
					case "batch":
						if _, err := s.SaveMessages(ctx, ms); err != nil {
							b.Fatal(err)
						}
						continue
					case "batch_marked":
						ids := make([]string, len(ms))
						for j := range ms {
							ms[j].Unhandled, ids[j] = true, ms[j].ID
						}
						if _, err := s.SaveMessages(ctx, ms); err != nil {
							b.Fatal(err)
						}
						if err := s.MarkHandled(ctx, ids); err != nil {
							b.Fatal(err)
						}
						continue
					}
					for _, m := range ms {
						if err := s.SaveMessage(ctx, m); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N*page), "ms/msg")
			})
		}
	}
}
