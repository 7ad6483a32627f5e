package openaisim

import "net/http"

// rtSession is one realtime WebSocket session.
type rtSession struct{}

func (c *rtSession) abort() {}

func (s *Server) handleRealtime(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotImplemented, errorFor(501, "realtime: not yet"), 0)
}
