package discord

import (
	"strings"
	"testing"
)

// FuzzParseShardIDs feeds arbitrary shard specs (config, BANTER_SHARD_IDS) and counts (config,
// or GET /gateway/bot): the ids returned are distinct and below count; a count out of range is
// an error, whatever Discord answered, never an allocation of its size.
func FuzzParseShardIDs(f *testing.F) {
	for _, s := range []string{"", "3", "0-3", "0-1,4,6-7", "1,1", "3-1", "-1", "0-", " 2 - 3 ", "0-65535",
		"0-9223372036854775807", "9223372036854775807-9223372036854775807", "0-1000000000"} {
		f.Add(s, 16)
	}
	f.Add("", 2000000000)
	f.Add("0-1999999999", 2000000000)
	f.Add("0-99999", MaxShards)
	f.Add("0-5", -1)
	f.Fuzz(func(t *testing.T, spec string, count int) {
		ids, err := ParseShardIDs(spec, count)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "discord: shard ids") {
				t.Fatalf("error without context: %v", err)
			}
			return
		}
		if count < 1 || count > MaxShards {
			t.Fatalf("count %d accepted", count)
		}
		seen := make(map[int]bool, len(ids))
		for _, id := range ids {
			if id < 0 || id >= count || seen[id] {
				t.Fatalf("ParseShardIDs(%q, %d) = %v: id %d out of range or repeated", spec, count, ids, id)
			}
			seen[id] = true
		}
		if strings.TrimSpace(spec) == "" && len(ids) != count {
			t.Fatalf("empty spec gave %d ids of %d", len(ids), count)
		}
	})
}
