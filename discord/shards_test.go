package discord

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestShardOf(t *testing.T) {
	tests := []struct {
		guild string
		count int
		want  int
	}{
		// Discord's documented example: (guild_id >> 22) % num_shards.
		{"197038439483310086", 4, int((197038439483310086 >> 22) % 4)},
		{"197038439483310086", 1, 0},
		{"4194304", 2, 1}, // 1 << 22
		{"8388608", 2, 0}, // 2 << 22
		{"41771983423143937", 16, int((41771983423143937 >> 22) % 16)},
	}
	for _, tt := range tests {
		got, err := ShardOf(tt.guild, tt.count)
		if err != nil || got != tt.want {
			t.Errorf("ShardOf(%s, %d) = %d, %v; want %d", tt.guild, tt.count, got, err, tt.want)
		}
	}
	if _, err := ShardOf("general", 4); err == nil {
		t.Error("a non-snowflake guild id was routed")
	}
}

func TestParseShardIDs(t *testing.T) {
	tests := []struct {
		spec  string
		count int
		want  []int
		err   string
	}{
		{"", 3, []int{0, 1, 2}, ""},
		{"2", 4, []int{2}, ""},
		{"0-1", 4, []int{0, 1}, ""},
		{" 0-1, 3 ", 4, []int{0, 1, 3}, ""},
		{"4", 4, nil, "not below the shard count 4"},
		{"2-1", 4, nil, "is not an id or a range"},
		{"a", 4, nil, "is not an id or a range"},
		{"1,0-2", 4, nil, "listed twice"},
		{"-1", 4, nil, "is not an id or a range"},
		{"0", 0, nil, "shard count 0"},
	}
	for _, tt := range tests {
		got, err := ParseShardIDs(tt.spec, tt.count)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseShardIDs(%q, %d) = %v, %v; want error with %q", tt.spec, tt.count, got, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseShardIDs(%q, %d) = %v, %v; want %v", tt.spec, tt.count, got, err, tt.want)
		}
	}
}

// TestLocalIdentifyGateOrdersOneKey: a second identify of the same key waits for the first to
// be released (then for the spacing); another key does not wait at all.
func TestLocalIdentifyGateOrdersOneKey(t *testing.T) {
	ctx := context.Background()
	g := &LocalIdentifyGate{Spacing: time.Millisecond}
	release0, err := g.Acquire(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Another key is free at once (this would block forever if it were not).
	release1, err := g.Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	release1()

	events := make(chan string, 2)
	go func() {
		r, err := g.Acquire(ctx, 0)
		if err == nil {
			events <- "second acquired"
			r()
		}
	}()
	events <- "first released"
	release0()
	if first, second := <-events, <-events; first != "first released" || second != "second acquired" {
		t.Errorf("order = %q, %q", first, second)
	}

	// A waiter whose context ends gives up with the context's error and frees nothing.
	hold, _ := g.Acquire(ctx, 0)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.Acquire(cctx, 0); err == nil {
		t.Error("a cancelled wait acquired the key")
	}
	hold()
}

func TestProcessShards(t *testing.T) {
	for _, tt := range []struct {
		count, procs, idx int
		want              []int
	}{
		{4, 3, 0, []int{0, 3}}, {4, 3, 1, []int{1}}, {4, 3, 2, []int{2}}, {4, 1, 0, []int{0, 1, 2, 3}}, {2, 3, 2, nil},
	} {
		if got := ProcessShards(tt.count, tt.procs, tt.idx); !slices.Equal(got, tt.want) {
			t.Errorf("ProcessShards(%d, %d, %d) = %v, want %v", tt.count, tt.procs, tt.idx, got, tt.want)
		}
	}
	if got := ProcessRESTShare(2, 4); got != GlobalRESTLimit/2 {
		t.Errorf("share of 2 of 4 shards = %v", got)
	}
}

// TestParseShardIDsBoundedByCount: the work and memory of ParseShardIDs are bounded by the shard
// count (at most MaxShards), never by the numbers a spec or Discord's answer names: a spec
// naming two billion shards, or listing every shard twice, costs what the count allows and no
// more. Counted in bytes allocated, not in time.
func TestParseShardIDsBoundedByCount(t *testing.T) {
	allocated := func(spec string, count int) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ParseShardIDs(spec, count)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatalf("ParseShardIDs(%q, %d) accepted", spec, count)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	// Every id of a MaxShards count, as ints and as the "listed" marks, plus slack for the
	// slice's growth and the error: a few MB. A parse sized by the spec's numbers would need
	// gigabytes (two billion ints).
	const budget = 64 * MaxShards
	for _, c := range []struct {
		spec  string
		count int
	}{
		{"0-1999999999", 2000000000},                  // count over MaxShards: refused before any work
		{"", MaxShards + 1},                           //
		{"0-1999999999", MaxShards},                   // range past the count: refused before the loop
		{"0-99999,0-99999", MaxShards},                // every shard twice: stops at the first repeat
		{strings.Repeat("0-99999,", 1000), MaxShards}, // the same, in a long spec
	} {
		if n := allocated(c.spec, c.count); n > budget+uint64(2*len(c.spec)) {
			t.Errorf("ParseShardIDs(%.40q, %d) allocated %d bytes, more than the count allows (%d)", c.spec, c.count, n, budget)
		}
	}
}
