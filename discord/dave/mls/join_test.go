package mls

import (
	"testing"

	"github.com/banterbot/banter/discord/dave/mls/tls"
)

// TestWelcome runs welcome.json: decrypt GroupSecrets and GroupInfo and
// verify the GroupInfo signature.
func TestWelcome(t *testing.T) {
	var vs []struct {
		CipherSuite int  `json:"cipher_suite"`
		InitPriv    hexb `json:"init_priv"`
		KeyPackage  hexb `json:"key_package"`
		SignerPub   hexb `json:"signer_pub"`
		Welcome     hexb
	}
	loadVectors(t, "welcome.json", &vs)
	if len(vs) == 0 || vs[0].CipherSuite != 2 {
		t.Fatal("no cipher suite 2 vector")
	}
	for _, v := range vs {
		kpm, err := UnmarshalMLSMessage(v.KeyPackage)
		if err != nil {
			t.Fatal(err)
		}
		wm, err := UnmarshalMLSMessage(v.Welcome)
		if err != nil {
			t.Fatal(err)
		}
		initKey, err := HPKEPrivateKey(v.InitPriv)
		if err != nil {
			t.Fatal(err)
		}
		ref := kpm.KeyPackage.Ref()
		var sec *EncryptedGroupSecrets
		for i := range wm.Welcome.Secrets {
			if string(wm.Welcome.Secrets[i].NewMember) == string(ref) {
				sec = &wm.Welcome.Secrets[i]
			}
		}
		if sec == nil {
			t.Fatal("key package ref not found")
		}
		pt, err := DecryptWithLabel(initKey, "Welcome", wm.Welcome.EncryptedGroupInfo, sec.EncryptedGroupSecrets)
		if err != nil {
			t.Fatal(err)
		}
		gs, err := UnmarshalGroupSecrets(pt)
		if err != nil {
			t.Fatal(err)
		}
		aead, nonce, err := groupInfoAEAD(DeriveSecret(Extract(gs.JoinerSecret, zeroSecret()), "welcome"))
		if err != nil {
			t.Fatal(err)
		}
		giBytes, err := aead.Open(nil, nonce, wm.Welcome.EncryptedGroupInfo, nil)
		if err != nil {
			t.Fatal(err)
		}
		var gi GroupInfo
		r := tls.NewReader(giBytes)
		gi.decode(r)
		if err := r.Done(); err != nil {
			t.Fatal(err)
		}
		if err := gi.Verify(v.SignerPub); err != nil {
			t.Error(err)
		}
		s := deriveEpochSecrets(gs.JoinerSecret, nil, gi.GroupContext.AppendTo(nil))
		eq(t, "confirmation tag", MAC(s.Confirmation, gi.GroupContext.ConfirmedTranscriptHash), gi.ConfirmationTag)
	}
}

type passiveVector struct {
	CipherSuite  int `json:"cipher_suite"`
	ExternalPSKs []struct {
		PSKID hexb `json:"psk_id"`
		PSK   hexb
	} `json:"external_psks"`
	KeyPackage                hexb `json:"key_package"`
	SignaturePriv             hexb `json:"signature_priv"`
	EncryptionPriv            hexb `json:"encryption_priv"`
	InitPriv                  hexb `json:"init_priv"`
	Welcome                   hexb `json:"welcome"`
	RatchetTree               hexb `json:"ratchet_tree"`
	InitialEpochAuthenticator hexb `json:"initial_epoch_authenticator"`
	Epochs                    []struct {
		Proposals          []hexb
		Commit             hexb
		EpochAuthenticator hexb `json:"epoch_authenticator"`
	}
}

func runPassive(t *testing.T, v passiveVector) {
	kpm, err := UnmarshalMLSMessage(v.KeyPackage)
	if err != nil {
		t.Fatal(err)
	}
	kpp := &KeyPackagePrivate{}
	if kpp.Init, err = HPKEPrivateKey(v.InitPriv); err != nil {
		t.Fatal(err)
	}
	if kpp.Encryption, err = HPKEPrivateKey(v.EncryptionPriv); err != nil {
		t.Fatal(err)
	}
	if kpp.Signature, err = ParseSignaturePrivateKey(v.SignaturePriv); err != nil {
		t.Fatal(err)
	}
	wm, err := UnmarshalMLSMessage(v.Welcome)
	if err != nil {
		t.Fatal(err)
	}
	var tree *Tree
	if v.RatchetTree != nil {
		if tree, err = UnmarshalTree(v.RatchetTree); err != nil {
			t.Fatal(err)
		}
	}
	psks := map[string][]byte{}
	for _, p := range v.ExternalPSKs {
		psks[string(p.PSKID)] = p.PSK
	}
	g, err := join(wm.Welcome, kpm.KeyPackage, kpp, tree, psks)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "initial epoch authenticator", g.EpochAuthenticator(), v.InitialEpochAuthenticator)
	for n, e := range v.Epochs {
		for _, pb := range e.Proposals {
			pm, err := UnmarshalMLSMessage(pb)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g.AddProposal(pm); err != nil {
				t.Fatalf("epoch %d: proposal: %v", n, err)
			}
		}
		cm, err := UnmarshalMLSMessage(e.Commit)
		if err != nil {
			t.Fatal(err)
		}
		next, _, err := g.ProcessCommit(cm)
		if err != nil {
			t.Fatalf("epoch %d: %v", n, err)
		}
		g = next
		eq(t, "epoch authenticator", g.EpochAuthenticator(), e.EpochAuthenticator)
	}
}

// TestPassiveClientWelcome runs passive-client-welcome.json entries without
// PSKs (#0, #1 with the ratchet_tree extension; #4, #5 with an external tree).
func TestPassiveClientWelcome(t *testing.T) {
	var vs []passiveVector
	loadVectors(t, "passive-client-welcome.json", &vs)
	if len(vs) != 8 {
		t.Fatalf("%d vectors", len(vs))
	}
	for i, v := range vs {
		if v.CipherSuite != 2 {
			continue
		}
		t.Run(string(rune('0'+i)), func(t *testing.T) { runPassive(t, v) })
	}
}

// TestPassiveClientHandlingCommit runs handling-commit #0 (inline Add),
// #1 (inline Remove with path), #6 (Add by reference), #8 (Remove by
// reference with path); the others need Update, PSK or GCE proposals.
func TestPassiveClientHandlingCommit(t *testing.T) {
	var vs []passiveVector
	loadVectors(t, "passive-client-handling-commit.json", &vs)
	for _, i := range []int{0, 1, 6, 8} {
		t.Run(string(rune('0'+i)), func(t *testing.T) { runPassive(t, vs[i]) })
	}
}
