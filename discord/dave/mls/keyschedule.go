package mls

import "github.com/banterbot/banter/discord/dave/mls/tls"

// EpochSecrets are the key-schedule outputs of one epoch (RFC 9420 §8).
// DAVE uses only PublicMessage, so the sender-data, encryption, external
// and resumption secrets are derived only for completeness of the vectors.
type EpochSecrets struct {
	Joiner        []byte
	Welcome       []byte
	Epoch         []byte
	SenderData    []byte
	Encryption    []byte
	Exporter      []byte
	External      []byte
	Confirmation  []byte
	Membership    []byte
	Resumption    []byte
	Authenticator []byte
	Init          []byte
}

// joinerSecret is ExpandWithLabel(Extract(init_prev, commit_secret), "joiner", GroupContext, Nh).
func joinerSecret(initPrev, commitSecret, groupContext []byte) []byte {
	return ExpandWithLabel(Extract(initPrev, commitSecret), "joiner", groupContext, HashSize)
}

// zeroSecret is the all-zero Nh-byte secret (commit_secret without a path,
// psk_secret without PSKs).
func zeroSecret() []byte { return make([]byte, HashSize) }

// deriveEpochSecrets runs the key schedule from the joiner secret
// (RFC 9420 §8, Figure 22).
func deriveEpochSecrets(joiner, pskSecret, groupContext []byte) *EpochSecrets {
	if pskSecret == nil {
		pskSecret = zeroSecret()
	}
	member := Extract(joiner, pskSecret)
	s := secretsFromEpoch(ExpandWithLabel(member, "epoch", groupContext, HashSize))
	s.Joiner = joiner
	s.Welcome = DeriveSecret(member, "welcome")
	return s
}

// secretsFromEpoch derives the per-epoch secrets from epoch_secret.
func secretsFromEpoch(epoch []byte) *EpochSecrets {
	return &EpochSecrets{
		Epoch:         epoch,
		SenderData:    DeriveSecret(epoch, "sender data"),
		Encryption:    DeriveSecret(epoch, "encryption"),
		Exporter:      DeriveSecret(epoch, "exporter"),
		External:      DeriveSecret(epoch, "external"),
		Confirmation:  DeriveSecret(epoch, "confirm"),
		Membership:    DeriveSecret(epoch, "membership"),
		Resumption:    DeriveSecret(epoch, "resumption"),
		Authenticator: DeriveSecret(epoch, "authentication"),
		Init:          DeriveSecret(epoch, "init"),
	}
}

// Export is MLS-Exporter(label, context, length) (RFC 9420 §8.5).
func (e *EpochSecrets) Export(lbl string, context []byte, length int) []byte {
	return ExpandWithLabel(DeriveSecret(e.Exporter, lbl), "exported", Hash(context), length)
}

// welcomeKeyNonce derives the GroupInfo AEAD key and nonce from welcome_secret.
func welcomeKeyNonce(welcomeSecret []byte) (key, nonce []byte) {
	return ExpandWithLabel(welcomeSecret, "key", nil, aeadKeySize), ExpandWithLabel(welcomeSecret, "nonce", nil, aeadNonceSize)
}

// confirmedTranscriptHash is RFC 9420 §8.2:
// H(interim_prev || ConfirmedTranscriptHashInput{wire_format, content, signature}).
func confirmedTranscriptHash(interimPrev []byte, wf WireFormat, content *FramedContent, signature []byte) []byte {
	b := append([]byte{}, interimPrev...)
	b = tls.AppendU16(b, uint16(wf))
	b = content.AppendTo(b)
	b = tls.AppendVec(b, signature)
	return Hash(b)
}

// interimTranscriptHash is H(confirmed || InterimTranscriptHashInput{confirmation_tag}).
func interimTranscriptHash(confirmed, confirmationTag []byte) []byte {
	return Hash(tls.AppendVec(append([]byte{}, confirmed...), confirmationTag))
}
