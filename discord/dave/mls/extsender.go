package mls

import (
	"fmt"

	"github.com/banterbot/banter/discord/dave/mls/tls"
)

// ExternalSender is RFC 9420 §12.1.8.1, the body of DAVE op 25:
//
//	struct { SignaturePublicKey signature_key<V>; Credential credential; } ExternalSender;
type ExternalSender struct {
	SignatureKey []byte
	Credential   Credential
}

// AppendTo appends the serialized ExternalSender.
func (e *ExternalSender) AppendTo(b []byte) []byte {
	b = tls.AppendVec(b, e.SignatureKey)
	return e.Credential.appendTo(b)
}

func (e *ExternalSender) decode(r *tls.Reader) {
	e.SignatureKey = r.Vec()
	e.Credential.decode(r)
}

// UnmarshalExternalSender parses one ExternalSender (the op 25 payload).
// The result aliases b.
func UnmarshalExternalSender(b []byte) (*ExternalSender, error) {
	r := tls.NewReader(b)
	e := new(ExternalSender)
	e.decode(r)
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("mls: external sender: %w", err)
	}
	if _, err := ParseSignaturePublicKey(e.SignatureKey); err != nil {
		return nil, fmt.Errorf("mls: external sender: %w", err)
	}
	return e, nil
}

// ExternalSendersExtension returns the external_senders group context
// extension holding senders.
func ExternalSendersExtension(senders ...ExternalSender) Extension {
	data := tls.AppendNested(nil, func(b []byte) []byte {
		for i := range senders {
			b = senders[i].AppendTo(b)
		}
		return b
	})
	return Extension{Type: ExtensionExternalSenders, Data: data}
}

func decodeExternalSenders(data []byte) ([]ExternalSender, error) {
	r := tls.NewReader(data)
	s := r.Sub()
	var out []ExternalSender
	for s.Len() > 0 && s.Err() == nil {
		var e ExternalSender
		e.decode(s)
		out = append(out, e)
	}
	r.Join(s)
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("mls: external_senders extension: %w", err)
	}
	return out, nil
}
