package discordsim

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
)

// TestRESTCutsOnAnyRoute: CutNext and CutNextAfterEffect on RouteAny take whichever call
// comes next, once each, and the log names them; a call after them is answered.
func TestRESTCutsOnAnyRoute(t *testing.T) {
	w := newWorld(t)
	auth := "Bot " + w.sim.Token()
	w.sim.CutNext(RouteAny, 1)
	w.sim.CutNextAfterEffect(RouteAny, 1)
	for _, want := range []RESTFault{CutBeforeEffect, CutAfterEffect} {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", w.sim.APIBaseURL()+"/api/v10/users/@me", nil)
		req.Header.Set("Authorization", auth)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			t.Fatalf("%v: answered %d", want, resp.StatusCode)
		}
		log := w.sim.RESTLog()
		if got := log[len(log)-1]; got.Fault != want || got.Status != 0 || !got.Answered.IsZero() || got.Received.IsZero() {
			t.Errorf("recorded %+v, want fault %v, status 0, received and not answered", got, want)
		}
	}
	if resp := rest(t, w.sim, "GET", "/api/v10/users/@me", auth, nil, nil); resp.StatusCode != 200 {
		t.Errorf("a call after the faults: %d", resp.StatusCode)
	}
}

// TestHangEndsOnClose: a request held by HangNext ends when the server closes (no goroutine
// outlives it: TestMain checks), and never takes effect.
func TestHangEndsOnClose(t *testing.T) {
	w := newWorld(t)
	w.sim.HangNext(RouteMessageCreate, 1)
	wrote := make(chan struct{})
	ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { close(wrote) }})
	req, _ := http.NewRequestWithContext(ctx, "POST", w.sim.APIBaseURL()+"/api/v10/channels/"+string(w.text)+"/messages",
		strings.NewReader(`{"content":"held"}`))
	req.Header.Set("Authorization", "Bot "+w.sim.Token())
	req.Header.Set("Content-Type", "application/json")
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-wrote
	w.sim.Close()
	if err := <-done; err == nil {
		t.Error("a held request was answered")
	}
	if n := len(w.sim.Sent()); n != 0 {
		t.Errorf("%d messages created by a request held without effect", n)
	}
}

// TestPassNextThenHang: PassNext lets the next create through ahead of a queued HangNext, which
// takes the one after it; Holding counts the held request until its client gives up.
func TestPassNextThenHang(t *testing.T) {
	w := newWorld(t)
	w.sim.PassNext(RouteMessageCreate, 1)
	w.sim.HangNext(RouteMessageCreate, 1)
	create := func(ctx context.Context, content string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", w.sim.APIBaseURL()+"/api/v10/channels/"+string(w.text)+"/messages",
			strings.NewReader(`{"content":"`+content+`"}`))
		req.Header.Set("Authorization", "Bot "+w.sim.Token())
		req.Header.Set("Content-Type", "application/json")
		return http.DefaultClient.Do(req)
	}
	resp, err := create(t.Context(), "first")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the first create (passed): %v %v", resp, err)
	}
	resp.Body.Close()
	ctx, giveUp := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		resp, err := create(ctx, "second")
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	if err := w.sim.Await(t.Context(), func() bool { return w.sim.Holding() == 1 }); err != nil {
		t.Fatal(err)
	}
	giveUp()
	if err := <-done; err == nil {
		t.Error("the held create was answered")
	}
	if err := w.sim.Await(t.Context(), func() bool { return w.sim.Holding() == 0 }); err != nil {
		t.Fatal(err)
	}
	if sent := w.sim.Sent(); len(sent) != 1 || sent[0].Content != "first" {
		t.Errorf("created %v, want the first create only", sent)
	}
}
