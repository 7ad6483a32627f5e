#!/usr/bin/env python3
"""Generates kat.json: transport-encryption known answers built from the
documented packet layouts with an independent implementation (pyca/cryptography
for AES-256-GCM and ChaCha20-Poly1305, HChaCha20 written out here for
XChaCha20-Poly1305).

Layout (discord-api-docs voice-connections "Transport Encryption Modes",
dave-notes §2): packet = clear header (12 + 4*CC + 4 if X) || AEAD(key,
nonce, aad=clear header, plaintext) || BE32(counter); nonce = BE32(counter)
followed by zeros up to 12 (AES-GCM) or 24 (XChaCha) bytes. Plaintext = the
extension body (4*len bytes, if X) || frame || RTP padding (if P).
"""
import json, struct
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

def rotl(v, c): return ((v << c) & 0xffffffff) | (v >> (32 - c))
def qr(s, a, b, c, d):
    s[a]=(s[a]+s[b])&0xffffffff; s[d]=rotl(s[d]^s[a],16)
    s[c]=(s[c]+s[d])&0xffffffff; s[b]=rotl(s[b]^s[c],12)
    s[a]=(s[a]+s[b])&0xffffffff; s[d]=rotl(s[d]^s[a],8)
    s[c]=(s[c]+s[d])&0xffffffff; s[b]=rotl(s[b]^s[c],7)
def hchacha20(key, nonce16):
    s = list(struct.unpack('<4I', b'expand 32-byte k')) + list(struct.unpack('<8I', key)) + list(struct.unpack('<4I', nonce16))
    for _ in range(10):
        qr(s,0,4,8,12); qr(s,1,5,9,13); qr(s,2,6,10,14); qr(s,3,7,11,15)
        qr(s,0,5,10,15); qr(s,1,6,11,12); qr(s,2,7,8,13); qr(s,3,4,9,14)
    return struct.pack('<8I', *(s[0:4] + s[12:16]))
def xchacha_seal(key, nonce24, pt, aad):
    sub = hchacha20(key, nonce24[:16])
    return ChaCha20Poly1305(sub).encrypt(b'\0\0\0\0' + nonce24[16:], pt, aad)

# RFC draft-irtf-cfrg-xchacha-03 §2.2.1 HChaCha20 test vector, to check the above.
k = bytes(range(32))
n = bytes.fromhex('000000090000004a0000000031415927')
assert hchacha20(k, n).hex() == '82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc'

key = bytes(range(0x40, 0x60))
cases = [
    # name, header hex, plaintext hex (ext body || frame || padding), frame hex, counter
    ('plain', '8078b40ae2902c88000003e9', 'fcfffeaa00', 'fcfffeaa00', 1),
    ('csrc-ext-padding', 'b1780102000003c0deadbeef' + 'cafebabe' + 'bede0002',
     '1122334455667788' + 'f8fffe0102' + '000003', 'f8fffe0102', 0x01020304),
    ('counter-wrap', '80780000000000000000002a', 'f8fffe', 'f8fffe', 0xffffffff),
]
out = []
for mode in ('aead_aes256_gcm_rtpsize', 'aead_xchacha20_poly1305_rtpsize'):
    for name, hdr, pt, frame, ctr in cases:
        h, p = bytes.fromhex(hdr), bytes.fromhex(pt)
        c4 = struct.pack('>I', ctr)
        if mode.startswith('aead_aes'):
            ct = AESGCM(key).encrypt(c4 + b'\0' * 8, p, h)
        else:
            ct = xchacha_seal(key, c4 + b'\0' * 20, p, h)
        out.append(dict(name=name, mode=mode, key=key.hex(), header=hdr, plaintext=pt,
                        frame=frame, counter=ctr, packet=(h + ct + c4).hex()))
json.dump(out, open('kat.json', 'w'), indent=1)
print(len(out), 'vectors')
