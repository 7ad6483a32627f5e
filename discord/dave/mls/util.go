package mls

import "crypto/subtle"

func cipherEqual(a, b []byte) bool { return subtle.ConstantTimeCompare(a, b) == 1 }
