package voice

import (
	"io"
	"net"
	"sync"
	"testing"
)

// tcpProxy is a loopback TCP relay between the connection and the
// simulator's TLS listener (TLS passes through end to end). Cut drops every
// relayed connection (the client sees 1006) and Hold parks new connections
// until Release, so a test can make the server buffer messages for a
// disconnected client and check what a resume replays.
type tcpProxy struct {
	ln       net.Listener
	upstream string
	wg       sync.WaitGroup

	mu      sync.Mutex // guards following
	holding bool
	held    []net.Conn
	live    []net.Conn
	closed  bool
}

func newTCPProxy(t *testing.T, upstream string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, upstream: upstream}
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
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Close()
		u.Close()
		return
	}
	p.live = append(p.live, c, u)
	p.mu.Unlock()
	pipe := func(dst, src net.Conn) {
		defer p.wg.Done()
		io.Copy(dst, src)
		dst.Close()
		src.Close()
	}
	p.wg.Add(2)
	go pipe(u, c)
	go pipe(c, u)
}

// cutAndHold drops live connections and parks new ones.
func (p *tcpProxy) cutAndHold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holding = true
	for _, c := range p.live {
		c.Close()
	}
	p.live = nil
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
	for _, c := range append(p.live, p.held...) {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
