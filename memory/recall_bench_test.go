package memory

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/banterbot/banter/store"
)

// BenchmarkRecall: one turn's recall, from the cache, in a guild of 500 facts that all share
// the turn's words.
func BenchmarkRecall(b *testing.B) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "b.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for i := range 500 {
		st.AddFact(ctx, store.Fact{GuildID: "g", SubjectID: fmt.Sprint(i % 40), SubjectName: fmt.Sprintf("member%d", i%40),
			Statement: fmt.Sprintf("member%d answered question number %d about topic %d", i%40, i, i%17), SourceIDs: []string{fmt.Sprint(i)}})
	}
	c := NewCache(st, time.Hour)
	b.ResetTimer()
	for range b.N {
		if _, err := Recall(ctx, c, "g", []string{"0"}, "banter, question number 12?", 300); err != nil {
			b.Fatal(err)
		}
	}
}
