package mls

import "math/bits"

// Array-based tree math, RFC 9420 Appendix C. Node indices: leaves are even
// (leaf i is node 2i), parents odd. A tree with n leaves has 2n-1 nodes.

// level is the number of trailing one bits of x (0 for leaves).
func level(x uint32) uint {
	return uint(bits.TrailingZeros32(^x))
}

// nodeWidth is the number of nodes of a tree with n leaves.
func nodeWidth(n uint32) uint32 {
	if n == 0 {
		return 0
	}
	return 2*(n-1) + 1
}

// root is the root index of a tree with n leaves.
func root(n uint32) uint32 {
	w := nodeWidth(n)
	return (1 << (bits.Len32(w) - 1)) - 1
}

func left(x uint32) uint32 {
	k := level(x)
	if k == 0 {
		return x
	}
	return x ^ (1 << (k - 1))
}

func right(x uint32) uint32 {
	k := level(x)
	if k == 0 {
		return x
	}
	return x ^ (3 << (k - 1))
}

// parent is the parent of x in an (infinite) full tree.
func parent(x uint32) uint32 {
	k := level(x)
	b := (x >> (k + 1)) & 1
	return (x | (1 << k)) ^ (b << (k + 1))
}

func sibling(x uint32) uint32 {
	p := parent(x)
	if x < p {
		return right(p)
	}
	return left(p)
}

// directPath is the ancestors of x up to and including the root of a tree
// with n leaves (empty for the root itself).
func directPath(x, n uint32) []uint32 {
	r := root(n)
	var d []uint32
	for x != r {
		x = parent(x)
		d = append(d, x)
	}
	return d
}

// isAncestor reports whether a is a (non-strict) ancestor of x.
func isAncestor(a, x uint32) bool {
	k := level(a)
	return x>>(k+1) == a>>(k+1)
}

// leafRange returns the first and last leaf index under node x.
func leafRange(x uint32) (first, last uint32) {
	k := level(x)
	lo := (x >> (k + 1)) << (k + 1)
	hi := lo + (1 << (k + 1)) - 2
	return lo / 2, hi / 2
}

// commonAncestor is the lowest common ancestor of nodes x and y.
func commonAncestor(x, y uint32) uint32 {
	lx, ly := level(x)+1, level(y)+1
	if lx <= ly && x>>ly == y>>ly {
		return y
	}
	if ly <= lx && x>>lx == y>>lx {
		return x
	}
	xn, yn := x, y
	k := uint(0)
	for xn != yn {
		xn >>= 1
		yn >>= 1
		k++
	}
	return (xn << k) + (1 << (k - 1)) - 1
}
