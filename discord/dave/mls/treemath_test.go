package mls

import "testing"

// TestTreeMath runs tree-math.json.
func TestTreeMath(t *testing.T) {
	var vs []struct {
		NLeaves uint32 `json:"n_leaves"`
		NNodes  uint32 `json:"n_nodes"`
		Root    uint32
		Left    []*uint32
		Right   []*uint32
		Parent  []*uint32
		Sibling []*uint32
	}
	loadVectors(t, "tree-math.json", &vs)
	if len(vs) == 0 {
		t.Fatal("no vectors")
	}
	opt := func(ok bool, v uint32) *uint32 {
		if !ok {
			return nil
		}
		return &v
	}
	same := func(a, b *uint32) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	for _, v := range vs {
		if got := nodeWidth(v.NLeaves); got != v.NNodes {
			t.Errorf("n=%d: width %d, want %d", v.NLeaves, got, v.NNodes)
		}
		r := root(v.NLeaves)
		if r != v.Root {
			t.Errorf("n=%d: root %d, want %d", v.NLeaves, r, v.Root)
		}
		for x := uint32(0); x < v.NNodes; x++ {
			if g := opt(level(x) > 0, left(x)); !same(g, v.Left[x]) {
				t.Errorf("n=%d left(%d)", v.NLeaves, x)
			}
			if g := opt(level(x) > 0, right(x)); !same(g, v.Right[x]) {
				t.Errorf("n=%d right(%d)", v.NLeaves, x)
			}
			if g := opt(x != r, parent(x)); !same(g, v.Parent[x]) {
				t.Errorf("n=%d parent(%d)", v.NLeaves, x)
			}
			if g := opt(x != r, sibling(x)); !same(g, v.Sibling[x]) {
				t.Errorf("n=%d sibling(%d)", v.NLeaves, x)
			}
		}
	}
}

func TestCommonAncestor(t *testing.T) {
	for _, c := range []struct{ x, y, want uint32 }{
		{0, 2, 1}, {0, 6, 3}, {2, 4, 3}, {8, 14, 11}, {0, 14, 7}, {1, 5, 3}, {4, 4, 4}, {3, 0, 3},
	} {
		if got := commonAncestor(c.x, c.y); got != c.want {
			t.Errorf("lca(%d,%d) = %d, want %d", c.x, c.y, got, c.want)
		}
	}
}
