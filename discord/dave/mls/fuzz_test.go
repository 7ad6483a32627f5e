package mls

import (
	"bytes"
	"encoding/hex"
	"testing"
)

func fuzzSeeds(f *testing.F) {
	var vs []map[string]hexb
	loadVectors(f, "messages.json.gz", &vs)
	for _, v := range vs[:3] {
		for _, b := range v {
			f.Add([]byte(b))
		}
	}
	for _, s := range []string{"", "0001", "00010001", "000100030002", "40", "ff"} {
		b, _ := hex.DecodeString(s)
		f.Add(b)
	}
}

// FuzzMLSMessage: any input either fails cleanly or round-trips exactly.
func FuzzMLSMessage(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := UnmarshalMLSMessage(b)
		if err != nil {
			return
		}
		if out := m.AppendTo(nil); !bytes.Equal(out, b) {
			t.Fatalf("round trip:\n in %x\nout %x", b, out)
		}
	})
}

// FuzzWelcome covers the bare Welcome of DAVE ops 28 and 30.
func FuzzWelcome(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := UnmarshalWelcome(b)
		if err != nil {
			return
		}
		if out := w.AppendTo(nil); !bytes.Equal(out, b) {
			t.Fatalf("round trip:\n in %x\nout %x", b, out)
		}
	})
}

// FuzzKeyPackage covers the bare KeyPackage of DAVE op 26.
func FuzzKeyPackage(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := UnmarshalKeyPackage(b)
		if err != nil {
			return
		}
		if out := k.AppendTo(nil); !bytes.Equal(out, b) {
			t.Fatalf("round trip:\n in %x\nout %x", b, out)
		}
		_ = k.Verify()
	})
}

// FuzzExternalSender covers DAVE op 25.
func FuzzExternalSender(f *testing.F) {
	fuzzSeeds(f)
	f.Add(append(append([]byte{0x40, 0x41, 4}, make([]byte, 64)...), 0, 1, 1, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := UnmarshalExternalSender(b)
		if err != nil {
			return
		}
		if out := e.AppendTo(nil); !bytes.Equal(out, b) {
			t.Fatalf("round trip:\n in %x\nout %x", b, out)
		}
	})
}

// FuzzRatchetTree covers the ratchet_tree extension.
func FuzzRatchetTree(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := UnmarshalTree(b)
		if err != nil {
			return
		}
		_ = tr.TreeHash()
		_ = tr.Verify([]byte("g"))
		if out := tr.Marshal(); !bytes.Equal(out, b) {
			t.Fatalf("round trip:\n in %x\nout %x", b, out)
		}
	})
}
