package voice

import (
	"net"
	"sync"
	"testing"
)

// tcpProxy is a loopback TCP relay between the connection and the
// simulator's TLS listener (TLS passes through end to end). It can cut
// every relayed connection (the client sees 1006), park new connections
// until release (so the server buffers messages for a disconnected client
// and a test can check what a resume replays), and black-hole the live
// connections (bytes stop flowing but nothing closes: a dead path).
type tcpProxy struct {
	ln       net.Listener
	upstream string
	wg       sync.WaitGroup

	mu      sync.Mutex // guards following
	holding bool
	held    []net.Conn
	live    []*relayPair
	dead    chan struct{} // closed on close: releases black-holed relays
	closed  bool
}

type relayPair struct {
	a, b  net.Conn
	stall chan struct{} // non-nil while black-holed (guarded by tcpProxy.mu)
}

func newTCPProxy(t *testing.T, upstream string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, upstream: upstream, dead: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.holding {
			p.held = append(p.held, c)
			p.mu.Unlock()
			continue
		}
		p.mu.Unlock()
		p.relay(c)
	}
}

func (p *tcpProxy) relay(c net.Conn) {
	u, err := net.Dial("tcp", p.upstream)
	if err != nil {
		c.Close()
		return
	}
	pr := &relayPair{a: c, b: u}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Close()
		u.Close()
		return
	}
	p.live = append(p.live, pr)
	p.mu.Unlock()
	p.wg.Add(2)
	go p.pipe(pr, u, c)
	go p.pipe(pr, c, u)
}

func (p *tcpProxy) pipe(pr *relayPair, dst, src net.Conn) {
	defer p.wg.Done()
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			stall := pr.stall
			p.mu.Unlock()
			if stall != nil {
				select {
				case <-stall:
				case <-p.dead:
				}
				return // a black-holed path never delivers again
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// cutAndHold drops live connections and parks new ones.
func (p *tcpProxy) cutAndHold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holding = true
	for _, pr := range p.live {
		pr.a.Close()
		pr.b.Close()
	}
	p.live = nil
}

// blackhole stops forwarding on the live connections without closing them;
// connections made afterwards relay normally.
func (p *tcpProxy) blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range p.live {
		pr.stall = make(chan struct{})
	}
}

// release relays the parked connections and new ones again.
func (p *tcpProxy) release() {
	p.mu.Lock()
	held := p.held
	p.held, p.holding = nil, false
	p.mu.Unlock()
	for _, c := range held {
		p.relay(c)
	}
}

func (p *tcpProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	close(p.dead)
	for _, pr := range p.live {
		pr.a.Close()
		pr.b.Close()
	}
	for _, c := range p.held {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
