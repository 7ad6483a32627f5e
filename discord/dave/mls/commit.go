package mls

import (
	"fmt"
	"slices"

	"github.com/banterbot/banter/discord/dave/mls/tls"
)

// CommitResult describes what a processed commit changed.
type CommitResult struct {
	Added   []uint32 // leaf indices added
	Removed []uint32 // leaf indices removed
}

// resolveProposals maps a commit's proposal list to proposals, looking up
// references in the queue.
func (g *Group) resolveProposals(list []ProposalOrRef) ([]*Proposal, error) {
	out := make([]*Proposal, 0, len(list))
	for _, p := range list {
		if p.Proposal != nil {
			out = append(out, p.Proposal)
			continue
		}
		i := slices.IndexFunc(g.queue, func(q queuedProposal) bool { return string(q.ref) == string(p.Ref) })
		if i < 0 {
			return nil, fmt.Errorf("%w: %x", errUnknownRef, p.Ref)
		}
		out = append(out, g.queue[i].proposal)
	}
	return out, nil
}

// applyProposals applies Remove then Add proposals (RFC 9420 §12.3) to t
// and drops private keys for blanked nodes.
func applyProposals(t *Tree, props []*Proposal, priv privateKeys, res *CommitResult) error {
	for _, p := range props {
		switch p.Type {
		case ProposalAdd, ProposalRemove:
		default:
			return fmt.Errorf("%w: %s", errUnsupported, p.Type)
		}
	}
	for _, p := range props {
		if p.Type != ProposalRemove {
			continue
		}
		if err := t.RemoveLeaf(p.Removed); err != nil {
			return err
		}
		res.Removed = append(res.Removed, p.Removed)
	}
	for x := range priv {
		if t.node(x) == nil {
			delete(priv, x)
		}
	}
	for _, p := range props {
		if p.Type != ProposalAdd {
			continue
		}
		if err := p.KeyPackage.Verify(); err != nil {
			return err
		}
		res.Added = append(res.Added, t.AddLeaf(&p.KeyPackage.LeafNode))
	}
	return nil
}

// pathRequired reports whether the proposals force an UpdatePath.
func pathRequired(props []*Proposal) bool {
	if len(props) == 0 {
		return true
	}
	for _, p := range props {
		if p.Type != ProposalAdd {
			return true
		}
	}
	return false
}

// ProcessCommit processes a commit sent by another member (RFC 9420
// §12.4.2) and returns the group of the next epoch. The receiver is not
// modified. If the commit removes us, it returns ErrRemoved.
func (g *Group) ProcessCommit(m *MLSMessage) (*Group, *CommitResult, error) {
	if m.WireFormat != WireFormatPublicMessage || m.Public == nil {
		return nil, nil, fmt.Errorf("mls: commit: wire format %d", m.WireFormat)
	}
	p := m.Public
	c := &p.Content
	if c.ContentType != ContentCommit || c.Sender.Type != SenderMember {
		return nil, nil, fmt.Errorf("mls: commit: content %s from sender type %d", c.ContentType, c.Sender.Type)
	}
	if err := g.checkFraming(p); err != nil {
		return nil, nil, fmt.Errorf("mls: commit: %w", err)
	}
	if c.Sender.Index == g.me {
		return nil, nil, fmt.Errorf("mls: commit: from our own leaf (use the pending commit)")
	}
	props, err := g.resolveProposals(c.Commit.Proposals)
	if err != nil {
		return nil, nil, fmt.Errorf("mls: commit: %w", err)
	}
	for _, pr := range props {
		if pr.Type == ProposalRemove && pr.Removed == c.Sender.Index {
			return nil, nil, fmt.Errorf("mls: commit: committer removes itself")
		}
	}
	if pathRequired(props) && c.Commit.Path == nil {
		return nil, nil, fmt.Errorf("mls: commit: path required")
	}
	res := &CommitResult{}
	tree := g.tree.Clone()
	priv := g.priv.clone()
	if err := applyProposals(tree, props, priv, res); err != nil {
		return nil, nil, fmt.Errorf("mls: commit: %w", err)
	}
	if slices.Contains(res.Removed, g.me) {
		return nil, res, ErrRemoved
	}
	next := &Group{ctx: g.ctx, tree: tree, me: g.me, sig: g.sig, priv: priv}
	next.ctx.Epoch++
	commitSecret := zeroSecret()
	if path := c.Commit.Path; path != nil {
		before := tree.Clone()
		if err := tree.mergePath(c.Sender.Index, path, g.ctx.GroupID); err != nil {
			return nil, nil, fmt.Errorf("mls: commit: %w", err)
		}
		for _, x := range directPath(2*c.Sender.Index, tree.LeafCount()) {
			delete(priv, x)
		}
		provisional := next.ctx
		provisional.TreeHash = tree.TreeHash()
		commitSecret, err = decryptPath(before, c.Sender.Index, g.me, path, provisional.AppendTo(nil), res.Added, priv)
		if err != nil {
			return nil, nil, fmt.Errorf("mls: commit: %w", err)
		}
	}
	next.ctx.TreeHash = tree.TreeHash()
	next.ctx.ConfirmedTranscriptHash = confirmedTranscriptHash(g.interim, WireFormatPublicMessage, c, p.Signature)
	if err := next.loadExtensions(); err != nil {
		return nil, nil, err
	}
	next.ctxBytes = next.ctx.AppendTo(nil)
	next.secrets = deriveEpochSecrets(joinerSecret(g.secrets.Init, commitSecret, next.ctxBytes), nil, next.ctxBytes)
	if !hmacEqual(MAC(next.secrets.Confirmation, next.ctx.ConfirmedTranscriptHash), p.ConfirmationTag) {
		return nil, nil, fmt.Errorf("mls: commit: %w", errConfirm)
	}
	next.confTag = p.ConfirmationTag
	next.interim = interimTranscriptHash(next.ctx.ConfirmedTranscriptHash, p.ConfirmationTag)
	return next, res, nil
}

// CommitOutput is the result of creating a commit.
type CommitOutput struct {
	Commit  []byte // MLSMessage(PublicMessage commit)
	Welcome []byte // bare Welcome, nil without Add proposals
	Next    *Group // our state once the commit is accepted
	Result  *CommitResult
}

// Commit creates a commit covering every queued proposal by reference,
// with an UpdatePath when required (Remove, or empty), and a Welcome with
// the ratchet_tree extension for added members (RFC 9420 §12.4). The
// receiver is not modified; the caller keeps Next until the server
// announces the commit.
func (g *Group) Commit() (*CommitOutput, error) {
	props := make([]*Proposal, len(g.queue))
	list := make([]ProposalOrRef, len(g.queue))
	for i, q := range g.queue {
		props[i] = q.proposal
		list[i] = ProposalOrRef{Ref: q.ref}
	}
	res := &CommitResult{}
	tree := g.tree.Clone()
	priv := g.priv.clone()
	if err := applyProposals(tree, props, priv, res); err != nil {
		return nil, fmt.Errorf("mls: create commit: %w", err)
	}
	if slices.Contains(res.Removed, g.me) {
		return nil, fmt.Errorf("mls: create commit: %w", ErrRemoved)
	}
	next := &Group{ctx: g.ctx, tree: tree, me: g.me, sig: g.sig, priv: priv}
	next.ctx.Epoch++
	commit := &Commit{Proposals: list}
	commitSecret := zeroSecret()
	var enc *encapResult
	if pathRequired(props) {
		var err error
		enc, err = encapPath(tree, g.me, g.ctx.GroupID, g.sig, res.Added, func(th []byte) []byte {
			pc := next.ctx
			pc.TreeHash = th
			return pc.AppendTo(nil)
		})
		if err != nil {
			return nil, fmt.Errorf("mls: create commit: %w", err)
		}
		for _, x := range directPath(2*g.me, tree.LeafCount()) {
			delete(priv, x)
		}
		for x, k := range enc.priv {
			priv[x] = k
		}
		commit.Path = enc.path
		commitSecret = enc.commitSecret
	}
	pm := &PublicMessage{Content: FramedContent{
		GroupID: g.ctx.GroupID, Epoch: g.ctx.Epoch, Sender: Sender{Type: SenderMember, Index: g.me},
		AuthenticatedData: []byte{}, ContentType: ContentCommit, Commit: commit,
	}}
	if err := pm.Sign(g.sig, g.ctxBytes); err != nil {
		return nil, err
	}
	next.ctx.TreeHash = tree.TreeHash()
	next.ctx.ConfirmedTranscriptHash = confirmedTranscriptHash(g.interim, WireFormatPublicMessage, &pm.Content, pm.Signature)
	if err := next.loadExtensions(); err != nil {
		return nil, err
	}
	next.ctxBytes = next.ctx.AppendTo(nil)
	joiner := joinerSecret(g.secrets.Init, commitSecret, next.ctxBytes)
	next.secrets = deriveEpochSecrets(joiner, nil, next.ctxBytes)
	pm.ConfirmationTag = MAC(next.secrets.Confirmation, next.ctx.ConfirmedTranscriptHash)
	pm.MembershipTag = pm.membershipTagFor(g.secrets.Membership, g.ctxBytes)
	next.confTag = pm.ConfirmationTag
	next.interim = interimTranscriptHash(next.ctx.ConfirmedTranscriptHash, pm.ConfirmationTag)
	out := &CommitOutput{Next: next, Result: res}
	out.Commit = (&MLSMessage{Version: ProtocolVersion, WireFormat: WireFormatPublicMessage, Public: pm}).AppendTo(nil)
	if len(res.Added) > 0 {
		w, err := next.welcome(props, res.Added, enc)
		if err != nil {
			return nil, err
		}
		out.Welcome = w
	}
	return out, nil
}

// welcome builds the Welcome for the members added at leaves added.
func (g *Group) welcome(props []*Proposal, added []uint32, enc *encapResult) ([]byte, error) {
	gi := &GroupInfo{
		GroupContext:    g.ctx,
		Extensions:      []Extension{{Type: ExtensionRatchetTree, Data: g.tree.Marshal()}},
		ConfirmationTag: g.confTag,
		Signer:          g.me,
	}
	var err error
	gi.Signature, err = SignWithLabel(g.sig, "GroupInfoTBS", gi.tbs())
	if err != nil {
		return nil, err
	}
	aead, nonce, err := groupInfoAEAD(g.secrets.Welcome)
	if err != nil {
		return nil, err
	}
	w := &Welcome{CipherSuite: CipherSuite, EncryptedGroupInfo: aead.Seal(nil, nonce, gi.AppendTo(nil), nil)}
	i := 0
	for _, p := range props {
		if p.Type != ProposalAdd {
			continue
		}
		leaf := added[i]
		i++
		gs := &GroupSecrets{JoinerSecret: g.secrets.Joiner}
		if enc != nil {
			gs.PathSecret = enc.secrets[commonAncestor(2*leaf, 2*g.me)]
		}
		ct, err := EncryptWithLabel(p.KeyPackage.InitKey, "Welcome", w.EncryptedGroupInfo, gs.appendTo(nil))
		if err != nil {
			return nil, err
		}
		w.Secrets = append(w.Secrets, EncryptedGroupSecrets{NewMember: p.KeyPackage.Ref(), EncryptedGroupSecrets: ct})
	}
	return w.AppendTo(nil), nil
}

// UnmarshalGroupSecrets parses GroupSecrets (for tests and tools).
func UnmarshalGroupSecrets(b []byte) (*GroupSecrets, error) {
	r := tls.NewReader(b)
	gs := new(GroupSecrets)
	gs.decode(r)
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("mls: group secrets: %w", err)
	}
	return gs, nil
}
