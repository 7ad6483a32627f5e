package dave

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/banterbot/banter/discord/dave/mls"
	"github.com/banterbot/banter/discord/dave/wire"
)

type transcriptStep struct {
	Op           int
	From         string
	KeyPackage   string `json:"key_package"`
	Payload      string
	Op28Reply    *string `json:"op28_reply"`
	Commit       *string
	Welcome      *string
	TransitionID int `json:"transition_id"`
}

type transcript struct {
	ES    string `json:"op25_external_sender"`
	ESPub string `json:"external_sender_pub"`
	Steps []transcriptStep
}

func loadTranscript(t testing.TB) *transcript {
	b, err := os.ReadFile("testdata/davey-gateway-sim-transcript.json")
	if err != nil {
		t.Fatal(err)
	}
	var tr transcript
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	return &tr
}

func unhex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDaveyTranscript parses every payload of a real davey/OpenMLS call
// (ops 25–30) and verifies key package signatures, external proposal
// signatures, revoke references and op 28 layouts.
func TestDaveyTranscript(t *testing.T) {
	tr := loadTranscript(t)
	es, err := mls.UnmarshalExternalSender(unhex(t, tr.ES))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(es.SignatureKey, unhex(t, tr.ESPub)) {
		t.Fatal("external sender key differs")
	}
	refs := map[string]bool{}
	var kps, proposals, commits, welcomes, revokes int
	for i, s := range tr.Steps {
		switch s.Op {
		case 26:
			kp, err := mls.UnmarshalKeyPackage(unhex(t, s.KeyPackage))
			if err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if err := kp.Verify(); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			kps++
		case 27:
			var e wire.ProposalsEvent
			raw := unhex(t, s.Payload)
			if err := e.Unmarshal(raw); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if !bytes.Equal(e.AppendTo(nil), raw) {
				t.Fatalf("step %d: op 27 round trip", i)
			}
			for _, m := range e.Messages {
				if err := m.Public.VerifySignature(es.SignatureKey, nil); err != nil {
					t.Fatalf("step %d: external proposal: %v", i, err)
				}
				refs[string(m.Public.ProposalRef())] = true
				proposals++
			}
			for _, r := range e.Refs {
				if !refs[string(r)] {
					t.Fatalf("step %d: revoke of unknown ref %x", i, r)
				}
				revokes++
			}
			if s.Op28Reply != nil {
				var c wire.CommitWelcomeCommand
				reply := unhex(t, *s.Op28Reply)
				if err := c.Unmarshal(reply); err != nil {
					t.Fatalf("step %d: op 28: %v", i, err)
				}
				if !bytes.Equal(c.Commit, unhex(t, *s.Commit)) || !bytes.Equal(c.AppendTo(nil), reply) {
					t.Fatalf("step %d: op 28 split", i)
				}
				ci, err := mls.InspectCommit(c.Commit)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range ci.Refs {
					if !refs[string(r)] {
						t.Fatalf("step %d: commit references unknown proposal", i)
					}
				}
				commits++
				if c.Welcome != nil {
					if _, err := mls.WelcomeRecipients(c.Welcome); err != nil {
						t.Fatal(err)
					}
					welcomes++
				}
			}
		}
	}
	if kps == 0 || proposals == 0 || commits == 0 || welcomes == 0 || revokes == 0 {
		t.Fatalf("transcript coverage: %d %d %d %d %d", kps, proposals, commits, welcomes, revokes)
	}
}

func opSeeds(f *testing.F) {
	tr := loadTranscript(f)
	f.Add(unhex(f, tr.ES))
	for _, s := range tr.Steps {
		for _, h := range []string{s.KeyPackage, s.Payload} {
			if h != "" {
				f.Add(unhex(f, h))
			}
		}
		for _, h := range []*string{s.Op28Reply, s.Welcome} {
			if h != nil {
				f.Add(append([]byte{0, 1}, unhex(f, *h)...))
			}
		}
	}
	f.Add([]byte{})
	f.Add([]byte{1, 0})
}

// FuzzOps feeds arbitrary bytes to every binary DAVE payload parser
// (ops 25–30) and checks that parsed payloads re-serialize exactly.
func FuzzOps(f *testing.F) {
	opSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = mls.UnmarshalExternalSender(b) // op 25
		_, _ = mls.UnmarshalKeyPackage(b)     // op 26
		var p wire.ProposalsEvent             // op 27
		if p.Unmarshal(b) == nil && !bytes.Equal(p.AppendTo(nil), b) {
			t.Fatalf("op 27 round trip: %x", b)
		}
		var c wire.CommitWelcomeCommand // op 28
		if c.Unmarshal(b) == nil && !bytes.Equal(c.AppendTo(nil), b) {
			t.Fatalf("op 28 round trip: %x", b)
		}
		var tm wire.TransitionMessage // ops 29, 30
		if tm.Unmarshal(b) == nil {
			if !bytes.Equal(tm.AppendTo(nil), b) {
				t.Fatalf("op 29/30 round trip: %x", b)
			}
			_, _ = mls.UnmarshalMLSMessage(tm.Message)
			_, _ = mls.UnmarshalWelcome(tm.Message)
		}
	})
}

// FuzzSession feeds arbitrary payloads for every opcode to a fresh session
// and to a member of an established group: it must never panic, and the
// established member must still exchange frames afterwards unless it
// reset itself.
func FuzzSession(f *testing.F) {
	opSeeds(f)
	ops := []wire.Opcode{wire.OpSessionDescription, wire.OpMLSExternalSender, wire.OpClientsConnect, wire.OpMLSProposals,
		wire.OpMLSAnnounceCommitTransition, wire.OpMLSWelcome, wire.OpPrepareTransition, wire.OpExecuteTransition,
		wire.OpPrepareEpoch, wire.OpClientDisconnect}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := NewSession(Config{UserID: 1, ChannelID: 2})
		for _, op := range ops {
			_, _ = s.HandleGateway(op, b, op >= 25)
		}
		_, _ = s.DecryptOpus("5", nil, b)

		g := newGateway(t, testChannel)
		x, y := newGoMember(1, testChannel), newGoMember(2, testChannel)
		g.connect(x)
		g.connect(y)
		g.create()
		for _, op := range ops {
			if op == wire.OpPrepareEpoch || op == wire.OpSessionDescription || op == wire.OpClientDisconnect {
				continue // legitimate resets or departures
			}
			_, _ = x.s.HandleGateway(op, b, op >= 25)
		}
		_, _ = x.s.DecryptOpus("2", nil, b)
		if x.s.Status() == StatusActive && x.s.ProtocolVersion() == 1 {
			g.checkFrames("after fuzz")
		}
	})
}
