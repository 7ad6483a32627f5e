package discord

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/url"

	"github.com/gorilla/websocket"
)

// gatewayProxied reports whether gateway connections go through a proxy (HTTPS_PROXY): the
// dialer then speaks to the proxy, and wrapDialer's wrappers do not see the gateway's bytes.
func gatewayProxied() bool {
	probe := &http.Request{URL: &url.URL{Scheme: "https", Host: "gateway.discord.gg"}}
	p, err := http.ProxyFromEnvironment(probe)
	return err != nil || p != nil
}

// wrapDialer returns base (discordgo's default when nil) with every gateway connection it
// makes passed through wrap, for ws:// and wss:// alike: wrap sees the WebSocket bytes, not
// TLS records. It dials through base's dial functions when base has them, so wrappers stack
// (each sees the connection the one below returned). wrap may refuse a connection by returning
// an error (it must close it then).
func wrapDialer(base *websocket.Dialer, wrap func(net.Conn) (net.Conn, error)) *websocket.Dialer {
	if base == nil {
		base = websocket.DefaultDialer
	}
	d := *base
	dial := base.NetDialContext
	if dial == nil {
		var nd net.Dialer
		dial = nd.DialContext
	}
	d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return wrap(c)
	}
	if tlsDial := base.NetDialTLSContext; tlsDial != nil {
		d.NetDialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := tlsDial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return wrap(c)
		}
		return &d
	}
	d.NetDialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		raw, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := tls.Client(raw, &tls.Config{ServerName: host, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, err
		}
		return wrap(tc)
	}
	return &d
}
