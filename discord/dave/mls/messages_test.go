package mls

import (
	"testing"

	"github.com/banterbot/banter/discord/dave/mls/tls"
)

// roundTrip decodes b with dec, re-encodes with enc and compares.
func roundTrip[T any](t *testing.T, name string, b []byte, dec func(*T, *tls.Reader), enc func(*T, []byte) []byte) {
	t.Helper()
	v := new(T)
	r := tls.NewReader(b)
	dec(v, r)
	if err := r.Done(); err != nil {
		t.Errorf("%s: decode: %v", name, err)
		return
	}
	eq(t, name, enc(v, nil), b)
}

// TestMessagesRoundTrip runs messages.json (all 300 entries): every struct
// parses and re-serializes to the same bytes.
func TestMessagesRoundTrip(t *testing.T) {
	var vs []struct {
		Welcome        hexb `json:"mls_welcome"`
		GroupInfo      hexb `json:"mls_group_info"`
		KeyPackage     hexb `json:"mls_key_package"`
		RatchetTree    hexb `json:"ratchet_tree"`
		GroupSecrets   hexb `json:"group_secrets"`
		Add            hexb `json:"add_proposal"`
		Update         hexb `json:"update_proposal"`
		Remove         hexb `json:"remove_proposal"`
		PSK            hexb `json:"pre_shared_key_proposal"`
		ReInit         hexb `json:"re_init_proposal"`
		ExternalInit   hexb `json:"external_init_proposal"`
		GCE            hexb `json:"group_context_extensions_proposal"`
		Commit         hexb `json:"commit"`
		PublicApp      hexb `json:"public_message_application"`
		PublicProposal hexb `json:"public_message_proposal"`
		PublicCommit   hexb `json:"public_message_commit"`
		Private        hexb `json:"private_message"`
	}
	loadVectors(t, "messages.json.gz", &vs)
	if len(vs) != 300 {
		t.Fatalf("got %d vectors", len(vs))
	}
	msg := func(m *MLSMessage, r *tls.Reader) { *m = *DecodeMLSMessage(r) }
	msgEnc := (*MLSMessage).AppendTo
	body := func(typ ProposalType) (func(*Proposal, *tls.Reader), func(*Proposal, []byte) []byte) {
		return func(p *Proposal, r *tls.Reader) { p.Type = typ; p.decodeBody(r) }, (*Proposal).appendBody
	}
	for i, v := range vs {
		roundTrip(t, "welcome", v.Welcome, msg, msgEnc)
		roundTrip(t, "group_info", v.GroupInfo, msg, msgEnc)
		roundTrip(t, "key_package", v.KeyPackage, msg, msgEnc)
		nodes, err := decodeRatchetTree(v.RatchetTree)
		if err != nil {
			t.Errorf("%d: ratchet tree: %v", i, err)
		} else {
			eq(t, "ratchet_tree", encodeRatchetTree(nodes), v.RatchetTree)
		}
		roundTrip(t, "group_secrets", v.GroupSecrets, (*GroupSecrets).decode, (*GroupSecrets).appendTo)
		for _, c := range []struct {
			typ ProposalType
			b   []byte
		}{{ProposalAdd, v.Add}, {ProposalUpdate, v.Update}, {ProposalRemove, v.Remove}, {ProposalPreSharedKey, v.PSK},
			{ProposalReInit, v.ReInit}, {ProposalExternalInit, v.ExternalInit}, {ProposalGroupContextExtensions, v.GCE}} {
			d, e := body(c.typ)
			roundTrip(t, c.typ.String(), c.b, d, e)
		}
		roundTrip(t, "commit", v.Commit, (*Commit).decode, (*Commit).AppendTo)
		roundTrip(t, "public_message_application", v.PublicApp, msg, msgEnc)
		roundTrip(t, "public_message_proposal", v.PublicProposal, msg, msgEnc)
		roundTrip(t, "public_message_commit", v.PublicCommit, msg, msgEnc)
		roundTrip(t, "private_message", v.Private, msg, msgEnc)
		if t.Failed() {
			t.Fatalf("vector %d failed", i)
		}
	}
}
