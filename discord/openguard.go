package discord

import (
	"net"
	"sync"

	"github.com/gorilla/websocket"
)

// openGuard makes a session's Open stoppable. discordgo's Open takes no context and reads the
// gateway's Hello and first event with no deadline, holding the session's lock, so neither a
// stop (SIGTERM while logging in) nor a gateway that accepts the connection and then says
// nothing would end it. The guard's dialer remembers the connections dialled while an Open is
// under way; abort closes them, which ends Open's blocked read with an error.
type openGuard struct {
	mu      sync.Mutex // guards following
	opening bool
	aborted bool
	conns   []net.Conn
}

// dialer returns base (discordgo's default when nil) with its connections remembered while an
// Open is under way. It dials through base's dial functions when base has them.
func (g *openGuard) dialer(base *websocket.Dialer) *websocket.Dialer {
	return wrapDialer(base, func(c net.Conn) (net.Conn, error) {
		g.mu.Lock()
		defer g.mu.Unlock()
		switch {
		case g.opening && g.aborted:
			c.Close()
			return nil, net.ErrClosed
		case g.opening:
			g.conns = append(g.conns, c)
		}
		return c, nil
	})
}

// begin starts remembering connections for an Open.
func (g *openGuard) begin() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.opening, g.aborted, g.conns = true, false, nil
}

// end stops remembering: the connections now belong to the session.
func (g *openGuard) end() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.opening, g.conns = false, nil
}

// abort closes the connections of the Open under way (and any it dials from now on).
func (g *openGuard) abort() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.opening {
		return
	}
	g.aborted = true
	for _, c := range g.conns {
		c.Close()
	}
}
