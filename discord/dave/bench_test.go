package dave

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"testing"
	"time"
)

// BenchmarkOpusFrameVsDavey measures encrypt + decrypt per 20 ms Opus
// frame (160 bytes, 64 kb/s) in banter and in @snazzah/davey 0.1.12 in
// the same run, in an established two-member group (banter a, davey b).
// Each side encrypts its own frame and decrypts one of the other's per
// iteration. davey's time is measured inside node (no IPC), ours in Go.
// Reported: banter-ns/frame, davey-ns/frame and davey/banter (>1: banter
// is faster). Run with e.g. -benchtime=20000x.
func BenchmarkOpusFrameVsDavey(b *testing.B) {
	daveyPeerPath(b)
	a, d := benchGroup(b)
	opus := make([]byte, 160)
	rand.Read(opus)
	from := strconv.FormatUint(d.uid, 10)
	enc := make([]byte, 0, 256)
	dec := make([]byte, 0, 256)
	var goTime time.Duration
	var daveyNS int64
	b.ReportAllocs()
	b.ResetTimer()
	// Work in chunks so that the frames exchanged with node stay small.
	for done := 0; done < b.N; {
		n := min(b.N-done, 20000)
		done += n
		b.StopTimer()
		goFrames := make([]string, n)
		for i := range goFrames {
			f, err := a.s.EncryptOpus(nil, opus)
			if err != nil {
				b.Fatal(err)
			}
			goFrames[i] = hex.EncodeToString(f)
		}
		var r struct {
			NS     int64
			Frames []string
		}
		if err := d.call(b, map[string]any{"cmd": "bench", "uid": strconv.FormatUint(a.uid, 10), "opus": hex.EncodeToString(opus), "frames": goFrames}, &r); err != nil {
			b.Fatal(err)
		}
		daveyNS += r.NS
		daveyFrames := make([][]byte, n)
		for i, h := range r.Frames {
			daveyFrames[i], _ = hex.DecodeString(h)
		}
		b.StartTimer()
		start := time.Now()
		for i := 0; i < n; i++ {
			var err error
			if enc, err = a.s.EncryptOpus(enc[:0], opus); err != nil {
				b.Fatal(err)
			}
			if dec, err = a.s.DecryptOpus(from, dec[:0], daveyFrames[i]); err != nil {
				b.Fatal(err)
			}
		}
		goTime += time.Since(start)
	}
	b.StopTimer()
	goNS := float64(goTime.Nanoseconds()) / float64(b.N)
	dNS := float64(daveyNS) / float64(b.N)
	b.ReportMetric(goNS, "banter-ns/frame")
	b.ReportMetric(dNS, "davey-ns/frame")
	b.ReportMetric(dNS/goNS, "davey/banter")
}

// benchGroup forms a two-member group: banter session a and davey d.
func benchGroup(b *testing.B) (*goMember, *daveyMember) {
	b.Helper()
	g := newGateway(b, testChannel)
	a := newGoMember(2001, testChannel)
	d := newDaveyMember(b, 2002, testChannel)
	g.connect(a)
	g.connect(d)
	g.commitWinner = prefer(a)
	g.create()
	g.checkAuth("bench")
	return a, d
}
