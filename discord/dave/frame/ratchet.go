// Package frame implements the DAVE media frame format and its ciphers
// (DAVE whitepaper §"Sender Key Derivation" and §"Frame Format"): the
// per-sender hash ratchet, the Opus frame encryptor and the receive-side
// decryptor with generation and replay-window rules.
//
// Nothing here does I/O or logs; the types are not safe for concurrent use
// (the DAVE session serializes access).
package frame

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/banterbot/banter/discord/dave/mls"
)

// Sizes of the DAVE frame cipher (AES-128-GCM with an 8-byte tag).
const (
	KeySize = 16
	TagSize = 8
)

var errErased = errors.New("frame: ratchet generation erased")

// Ratchet is the MLS hash ratchet seeded with a sender's base secret
// (RFC 9420 §9.1 as used by DAVE; libdave mls_key_ratchet.cpp):
//
//	key_g  = ExpandWithLabel(secret_g, "key", BE32(g), 16)
//	secret_{g+1} = ExpandWithLabel(secret_g, "secret", BE32(g), 32)
type Ratchet struct {
	secret []byte // secret of generation next
	next   uint32
	keys   map[uint32][]byte
	floor  uint32 // generations below floor are erased
}

// NewRatchet starts a ratchet at generation 0 from base (16 bytes for DAVE).
func NewRatchet(base []byte) *Ratchet {
	return &Ratchet{secret: append([]byte{}, base...), keys: map[uint32][]byte{}}
}

// SenderBaseSecret is the DAVE sender key seed for user id uid:
// MLS-Exporter("Discord Secure Frames v0", LE64(uid), 16).
func SenderBaseSecret(g *mls.Group, uid uint64) []byte {
	return g.Export(ExporterLabel, SenderContext(uid), KeySize)
}

// ExporterLabel is the MLS exporter label of DAVE sender keys.
const ExporterLabel = "Discord Secure Frames v0"

// SenderContext is the exporter context for user uid: LE64(uid).
func SenderContext(uid uint64) []byte { return binary.LittleEndian.AppendUint64(nil, uid) }

// Key returns the key of generation gen, ratcheting forward as needed.
func (r *Ratchet) Key(gen uint32) ([]byte, error) {
	if k, ok := r.keys[gen]; ok {
		return k, nil
	}
	if gen < r.next || gen < r.floor {
		return nil, fmt.Errorf("%w: %d", errErased, gen)
	}
	for r.next <= gen {
		ctx := binary.BigEndian.AppendUint32(nil, r.next)
		r.keys[r.next] = mls.ExpandWithLabel(r.secret, "key", ctx, KeySize)
		r.secret = mls.ExpandWithLabel(r.secret, "secret", ctx, mls.HashSize)
		r.next++
	}
	return r.keys[gen], nil
}

// Erase forgets the keys of all generations below gen.
func (r *Ratchet) Erase(gen uint32) {
	for g := range r.keys {
		if g < gen {
			delete(r.keys, g)
		}
	}
	if gen > r.floor {
		r.floor = gen
	}
}
