package wire

import (
	"bytes"
	"encoding/hex"
	"testing"
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// TestProposalsEvent: op 27 revoke and empty append round-trip; bad
// operations and truncated vectors are errors.
func TestProposalsEvent(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		wantErr bool
		refs    int
	}{
		{"revoke two", mustHex("01" + "06" + "02aaaa" + "02bbbb"), false, 2},
		{"empty append", mustHex("0000"), false, 0},
		{"bad op", mustHex("0200"), true, 0},
		{"truncated", mustHex("010502aa"), true, 0},
		{"trailing", mustHex("000000"), true, 0},
		{"garbage append", mustHex("0003000102"), true, 0},
	}
	for _, c := range tests {
		var e ProposalsEvent
		err := e.Unmarshal(c.in)
		if (err != nil) != c.wantErr {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if err == nil {
			if len(e.Refs) != c.refs || !bytes.Equal(e.AppendTo(nil), c.in) {
				t.Errorf("%s: refs %d, round trip %x", c.name, len(e.Refs), e.AppendTo(nil))
			}
		}
	}
}

// TestTransitionMessage: ops 29 and 30 carry a big-endian transition id.
func TestTransitionMessage(t *testing.T) {
	var m TransitionMessage
	if err := m.Unmarshal(mustHex("0102ff")); err != nil || m.TransitionID != 0x0102 || !bytes.Equal(m.Message, []byte{0xff}) {
		t.Fatalf("%+v %v", m, err)
	}
	if err := m.Unmarshal([]byte{1, 2}); err == nil {
		t.Fatal("empty message accepted")
	}
	if !bytes.Equal(m.AppendTo(nil), mustHex("0102ff")) {
		t.Fatal("round trip")
	}
}

// TestCommitWelcomeRejectsNonCommit: op 28 must start with a commit.
func TestCommitWelcomeRejectsNonCommit(t *testing.T) {
	var c CommitWelcomeCommand
	for _, in := range [][]byte{nil, mustHex("0001"), mustHex("00010001")} {
		if err := c.Unmarshal(in); err == nil {
			t.Errorf("%x accepted", in)
		}
	}
}

func TestOpcodeString(t *testing.T) {
	if OpMLSWelcome.String() != "MLSWelcome" || Opcode(99).String() != "Opcode(99)" {
		t.Fatal(OpMLSWelcome.String(), Opcode(99).String())
	}
}

// FuzzPayloads: the op 27–30 parsers never panic and re-serialize exactly.
func FuzzPayloads(f *testing.F) {
	f.Add(mustHex("01060" + "202aaaa02bbbb"))
	f.Add(mustHex("0000"))
	f.Add(mustHex("0001ff00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var p ProposalsEvent
		if p.Unmarshal(b) == nil && !bytes.Equal(p.AppendTo(nil), b) {
			t.Fatalf("op 27 round trip %x", b)
		}
		var c CommitWelcomeCommand
		if c.Unmarshal(b) == nil && !bytes.Equal(c.AppendTo(nil), b) {
			t.Fatalf("op 28 round trip %x", b)
		}
		var m TransitionMessage
		if m.Unmarshal(b) == nil && !bytes.Equal(m.AppendTo(nil), b) {
			t.Fatalf("op 29/30 round trip %x", b)
		}
	})
}
