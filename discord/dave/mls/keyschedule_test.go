package mls

import (
	"testing"

	"github.com/banterbot/banter/discord/dave/mls/tls"
)

// TestKeySchedule runs the cs2 entry of key-schedule.json: the epoch chain,
// every epoch secret and the exporter.
func TestKeySchedule(t *testing.T) {
	var vs []struct {
		CipherSuite       int  `json:"cipher_suite"`
		GroupID           hexb `json:"group_id"`
		InitialInitSecret hexb `json:"initial_init_secret"`
		Epochs            []struct {
			CommitSecret            hexb `json:"commit_secret"`
			ConfirmationKey         hexb `json:"confirmation_key"`
			ConfirmedTranscriptHash hexb `json:"confirmed_transcript_hash"`
			EncryptionSecret        hexb `json:"encryption_secret"`
			EpochAuthenticator      hexb `json:"epoch_authenticator"`
			Exporter                struct {
				Context hexb
				Label   string
				Length  int
				Secret  hexb
			}
			ExporterSecret   hexb `json:"exporter_secret"`
			ExternalPub      hexb `json:"external_pub"`
			ExternalSecret   hexb `json:"external_secret"`
			GroupContext     hexb `json:"group_context"`
			InitSecret       hexb `json:"init_secret"`
			JoinerSecret     hexb `json:"joiner_secret"`
			MembershipKey    hexb `json:"membership_key"`
			PSKSecret        hexb `json:"psk_secret"`
			ResumptionPSK    hexb `json:"resumption_psk"`
			SenderDataSecret hexb `json:"sender_data_secret"`
			TreeHash         hexb `json:"tree_hash"`
			WelcomeSecret    hexb `json:"welcome_secret"`
		}
	}
	loadVectors(t, "key-schedule.json", &vs)
	for _, v := range vs {
		if v.CipherSuite != 2 {
			continue
		}
		init := []byte(v.InitialInitSecret)
		for n, e := range v.Epochs {
			gc := GroupContext{Version: 1, CipherSuite: 2, GroupID: v.GroupID, Epoch: uint64(n),
				TreeHash: e.TreeHash, ConfirmedTranscriptHash: e.ConfirmedTranscriptHash}
			gcb := gc.AppendTo(nil)
			eq(t, "group_context", gcb, e.GroupContext)
			joiner := joinerSecret(init, e.CommitSecret, gcb)
			eq(t, "joiner", joiner, e.JoinerSecret)
			s := deriveEpochSecrets(joiner, e.PSKSecret, gcb)
			eq(t, "welcome", s.Welcome, e.WelcomeSecret)
			eq(t, "sender_data", s.SenderData, e.SenderDataSecret)
			eq(t, "encryption", s.Encryption, e.EncryptionSecret)
			eq(t, "exporter", s.Exporter, e.ExporterSecret)
			eq(t, "external", s.External, e.ExternalSecret)
			eq(t, "confirm", s.Confirmation, e.ConfirmationKey)
			eq(t, "membership", s.Membership, e.MembershipKey)
			eq(t, "resumption", s.Resumption, e.ResumptionPSK)
			eq(t, "authenticator", s.Authenticator, e.EpochAuthenticator)
			eq(t, "init", s.Init, e.InitSecret)
			eq(t, "export", s.Export(e.Exporter.Label, e.Exporter.Context, e.Exporter.Length), e.Exporter.Secret)
			ext, err := hpkeKEM.DeriveKeyPair(s.External)
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "external_pub", ext.PublicKey().Bytes(), e.ExternalPub)
			init = s.Init
		}
		if len(v.Epochs) == 0 {
			t.Fatal("no epochs")
		}
		return
	}
	t.Fatal("no cs2 vector")
}

// TestTranscriptHashes runs transcript-hashes.json.
func TestTranscriptHashes(t *testing.T) {
	var vs []struct {
		CipherSuite     int  `json:"cipher_suite"`
		ConfirmationKey hexb `json:"confirmation_key"`
		AuthContent     hexb `json:"authenticated_content"`
		InterimBefore   hexb `json:"interim_transcript_hash_before"`
		ConfirmedAfter  hexb `json:"confirmed_transcript_hash_after"`
		InterimAfter    hexb `json:"interim_transcript_hash_after"`
	}
	loadVectors(t, "transcript-hashes.json", &vs)
	if len(vs) == 0 || vs[0].CipherSuite != 2 {
		t.Fatal("no cipher suite 2 vector")
	}
	for _, v := range vs {
		// AuthenticatedContent = wire_format || FramedContent || auth data.
		r := tls.NewReader(v.AuthContent)
		p := &PublicMessage{}
		wf := WireFormat(r.U16())
		p.Content.decode(r)
		p.Signature = r.Vec()
		p.ConfirmationTag = r.Vec()
		if err := r.Done(); err != nil {
			t.Fatal(err)
		}
		eq(t, "authenticated content", p.authenticatedContent(), v.AuthContent)
		confirmed := confirmedTranscriptHash(v.InterimBefore, wf, &p.Content, p.Signature)
		eq(t, "confirmed", confirmed, v.ConfirmedAfter)
		eq(t, "confirmation tag", MAC(v.ConfirmationKey, confirmed), p.ConfirmationTag)
		eq(t, "interim", interimTranscriptHash(confirmed, p.ConfirmationTag), v.InterimAfter)
	}
}

// TestMessageProtectionPublic runs the PublicMessage parts of
// message-protection.json: signature and membership tag of the given
// proposal and commit, and our own protection of the same content.
func TestMessageProtectionPublic(t *testing.T) {
	var vs []struct {
		CipherSuite   int  `json:"cipher_suite"`
		GroupID       hexb `json:"group_id"`
		Epoch         uint64
		TreeHash      hexb `json:"tree_hash"`
		Confirmed     hexb `json:"confirmed_transcript_hash"`
		SignaturePriv hexb `json:"signature_priv"`
		SignaturePub  hexb `json:"signature_pub"`
		MembershipKey hexb `json:"membership_key"`
		Proposal      hexb
		ProposalPub   hexb `json:"proposal_pub"`
		Commit        hexb
		CommitPub     hexb `json:"commit_pub"`
	}
	loadVectors(t, "message-protection.json", &vs)
	if len(vs) == 0 || vs[0].CipherSuite != 2 {
		t.Fatal("no cipher suite 2 vector")
	}
	for _, v := range vs {
		gc := GroupContext{Version: 1, CipherSuite: 2, GroupID: v.GroupID, Epoch: v.Epoch, TreeHash: v.TreeHash, ConfirmedTranscriptHash: v.Confirmed}
		ctx := gc.AppendTo(nil)
		priv, err := ParseSignaturePrivateKey(v.SignaturePriv)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name       string
			body, wire []byte
		}{{"proposal", v.Proposal, v.ProposalPub}, {"commit", v.Commit, v.CommitPub}} {
			m, err := UnmarshalMLSMessage(c.wire)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			p := m.Public
			if err := p.VerifySignature(v.SignaturePub, ctx); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			eq(t, c.name+" membership tag", p.membershipTagFor(v.MembershipKey, ctx), p.MembershipTag)
			var body []byte
			if p.Content.Proposal != nil {
				body = p.Content.Proposal.AppendTo(nil)
			} else {
				body = p.Content.Commit.AppendTo(nil)
			}
			eq(t, c.name+" body", body, c.body)

			// Protect it ourselves and check it verifies.
			if err := p.Sign(priv, ctx); err != nil {
				t.Fatal(err)
			}
			p.MembershipTag = p.membershipTagFor(v.MembershipKey, ctx)
			m2, err := UnmarshalMLSMessage(m.AppendTo(nil))
			if err != nil {
				t.Fatal(err)
			}
			if err := m2.Public.VerifySignature(v.SignaturePub, ctx); err != nil {
				t.Errorf("%s: own signature: %v", c.name, err)
			}
			ctx2 := append([]byte{}, ctx...)
			ctx2[len(ctx2)-2] ^= 1
			if m2.Public.VerifySignature(v.SignaturePub, ctx2) == nil {
				t.Errorf("%s: signature verified with another group context", c.name)
			}
		}
	}
}
