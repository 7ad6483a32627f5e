package frame

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Receive-side limits (libdave common.h, cryptor_manager.cpp).
const (
	// CryptorExpiry is how long superseded keys stay usable.
	CryptorExpiry = 10 * time.Second
	// MaxGenerationGap is how far ahead of the newest generation a frame may be.
	MaxGenerationGap = 250
	// MaxMissingNonces bounds the replay window's list of skipped nonces.
	MaxMissingNonces = 1000
	// MaxFramesPerSecond bounds the generation reachable by a ratchet's age.
	MaxFramesPerSecond = 170
	generationWrap     = 1 << 8
)

var (
	errReplay      = errors.New("frame: replayed or too old nonce")
	errGeneration  = errors.New("frame: generation out of range")
	errNoDecryptor = errors.New("frame: no key could decrypt the frame")
	errPassthrough = errors.New("frame: unencrypted frame while passthrough is not allowed")
)

// wrappedGeneration maps an 8-bit frame generation to the full generation
// nearest above oldest (libdave ComputeWrappedGeneration).
func wrappedGeneration(oldest, gen uint32) uint32 {
	rem := oldest % generationWrap
	factor := oldest / generationWrap
	if gen < rem {
		factor++
	}
	return factor*generationWrap + gen
}

type generationCipher struct {
	c      *gcm8
	expiry time.Time // zero: no expiry
}

// keyManager holds one ratchet (one epoch of one sender) and its replay
// state (libdave CryptorManager).
type keyManager struct {
	ratchet     *Ratchet
	created     time.Time
	expiry      time.Time // zero: no expiry
	ciphers     map[uint32]*generationCipher
	oldest      uint32
	newest      uint32
	processed   bool
	newestNonce uint64
	missing     []uint64
}

func newKeyManager(r *Ratchet, now time.Time) *keyManager {
	return &keyManager{ratchet: r, created: now, ciphers: map[uint32]*generationCipher{}}
}

func bigNonce(gen, nonce uint32) uint64 { return uint64(gen)<<24 | uint64(nonce&0xFFFFFF) }

func (m *keyManager) canProcess(gen, nonce uint32) bool {
	if !m.processed {
		return true
	}
	b := bigNonce(gen, nonce)
	return b > m.newestNonce || slices.Contains(m.missing, b)
}

func (m *keyManager) cipher(gen uint32, now time.Time) (*gcm8, error) {
	for g, c := range m.ciphers {
		if !c.expiry.IsZero() && now.After(c.expiry) {
			delete(m.ciphers, g)
		}
	}
	for m.oldest < m.newest {
		if _, ok := m.ciphers[m.oldest]; ok {
			break
		}
		m.oldest++
	}
	if gen < m.oldest || gen > m.newest+MaxGenerationGap {
		return nil, fmt.Errorf("%w: %d (oldest %d, newest %d)", errGeneration, gen, m.oldest, m.newest)
	}
	maxGen := uint64(now.Sub(m.created).Seconds()*MaxFramesPerSecond) >> 24
	if uint64(gen) > maxGen {
		return nil, fmt.Errorf("%w: %d for a ratchet of age %v", errGeneration, gen, now.Sub(m.created))
	}
	if c, ok := m.ciphers[gen]; ok {
		return c.c, nil
	}
	key, err := m.ratchet.Key(gen)
	if err != nil {
		return nil, err
	}
	c, err := newGCM8(key)
	if err != nil {
		return nil, err
	}
	m.ciphers[gen] = &generationCipher{c: c}
	return c, nil
}

func (m *keyManager) reportSuccess(gen, nonce uint32, now time.Time) {
	b := bigNonce(gen, nonce)
	switch {
	case !m.processed:
		m.processed, m.newestNonce = true, b
	case b > m.newestNonce:
		for n := m.newestNonce + 1; n < b && b-n <= MaxMissingNonces; n++ {
			m.missing = append(m.missing, n)
		}
		m.newestNonce = b
	default:
		if i := slices.Index(m.missing, b); i >= 0 {
			m.missing = slices.Delete(m.missing, i, i+1)
		}
	}
	// Drop missing nonces that fell out of the window.
	if over := len(m.missing) - MaxMissingNonces; over > 0 {
		m.missing = slices.Delete(m.missing, 0, over)
	}
	if gen <= m.newest {
		return
	}
	for g, c := range m.ciphers {
		if g < gen && c.expiry.IsZero() {
			c.expiry = now.Add(CryptorExpiry)
		}
	}
	m.newest = gen
}

// Decryptor decrypts one sender's frames. It keeps the ratchets of
// earlier epochs for CryptorExpiry after a transition and tries the newest
// first (libdave decryptor.cpp). Passthrough of unencrypted frames is
// allowed only while set (WP §"Passthrough").
type Decryptor struct {
	now      func() time.Time
	managers []*keyManager // oldest first
	// passthroughUntil: zero = never, far future = always.
	passthroughUntil time.Time
	frame            Frame
}

// NewDecryptor returns a decryptor using clock now (time.Now if nil).
func NewDecryptor(now func() time.Time) *Decryptor {
	if now == nil {
		now = time.Now
	}
	return &Decryptor{now: now}
}

// TransitionToRatchet adds r as the newest key; older keys expire after
// CryptorExpiry.
func (d *Decryptor) TransitionToRatchet(r *Ratchet) {
	now := d.now()
	for _, m := range d.managers {
		if m.expiry.IsZero() || m.expiry.After(now.Add(CryptorExpiry)) {
			m.expiry = now.Add(CryptorExpiry)
		}
	}
	if r != nil {
		d.managers = append(d.managers, newKeyManager(r, now))
	}
}

// SetPassthrough allows unencrypted frames forever (always) or until
// expiry from now (libdave TransitionToPassthroughMode).
func (d *Decryptor) SetPassthrough(always bool, expiry time.Duration) {
	if always {
		d.passthroughUntil = time.Unix(1<<62, 0)
		return
	}
	d.passthroughUntil = d.now().Add(expiry)
}

// Decrypt appends the Opus payload of frame to dst. An exact Opus silence
// frame passes through; other unencrypted frames pass only while
// passthrough is allowed. It does not allocate on the steady-state path.
func (d *Decryptor) Decrypt(dst, frame []byte) ([]byte, error) {
	now := d.now()
	f := &d.frame
	if err := f.Unmarshal(frame); err != nil {
		if IsSilence(frame) || now.Before(d.passthroughUntil) {
			return append(dst, frame...), nil
		}
		return dst, fmt.Errorf("%w: %w", errPassthrough, err)
	}
	d.managers = slices.DeleteFunc(d.managers, func(m *keyManager) bool {
		return !m.expiry.IsZero() && now.After(m.expiry)
	})
	var lastErr error = errNoDecryptor
	for i := len(d.managers) - 1; i >= 0; i-- {
		m := d.managers[i]
		gen := wrappedGeneration(m.oldest, f.Nonce>>24)
		if !m.canProcess(gen, f.Nonce) {
			lastErr = errReplay
			continue
		}
		c, err := m.cipher(gen, now)
		if err != nil {
			lastErr = err
			continue
		}
		out, err := d.open(c, dst, f)
		if err != nil {
			lastErr = err
			continue
		}
		m.reportSuccess(gen, f.Nonce, now)
		return out, nil
	}
	return dst, lastErr
}

// open decrypts f's body; for frames with unencrypted ranges the aad is the
// concatenated ranges and the ciphertext the rest, re-interleaved after.
func (d *Decryptor) open(c *gcm8, dst []byte, f *Frame) ([]byte, error) {
	if len(f.Ranges) == 0 {
		return c.open(dst, f.Nonce, f.Body, f.Tag, nil)
	}
	var aad, ct []byte
	pos := 0
	for _, r := range f.Ranges {
		ct = append(ct, f.Body[pos:r.Offset]...)
		aad = append(aad, f.Body[r.Offset:r.Offset+r.Size]...)
		pos = r.Offset + r.Size
	}
	ct = append(ct, f.Body[pos:]...)
	pt, err := c.open(nil, f.Nonce, ct, f.Tag, aad)
	if err != nil {
		return dst, err
	}
	pos = 0
	for _, r := range f.Ranges {
		n := r.Offset - pos
		dst = append(dst, pt[:n]...)
		pt = pt[n:]
		dst = append(dst, f.Body[r.Offset:r.Offset+r.Size]...)
		pos = r.Offset + r.Size
	}
	return append(dst, pt...), nil
}
