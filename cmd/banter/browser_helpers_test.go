package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/banterbot/banter/config"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// chromiumPath finds Debian's chromium (make test installs it: browser-deps). Without it the
// browser tests skip, unless BANTER_REQUIRE_BROWSER is set (make test sets it).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("BANTER_REQUIRE_BROWSER") != "" {
		t.Fatal("chromium is not installed (make browser-deps: apt-get install -y chromium)")
	}
	t.Skip("chromium is not installed (make browser-deps: apt-get install -y chromium)")
	return ""
}

// browser starts a headless Chromium for one test and returns a tab's context. extra adds
// flags, e.g. the fake microphone's.
func browser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
		chromedp.WindowSize(1600, 1000),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts, extra...)...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// startPlayground runs `banter playground -addr 127.0.0.1:0` (args added) in this process and
// returns the page's URL once it has printed it. The playground stops when the test ends; when
// the test failed, the tail of the bot's log is in the test's output and the whole log is saved
// as an artifact beside the screenshots.
func startPlayground(t *testing.T, vars map[string]string, args ...string) string {
	t.Helper()
	state := t.TempDir()
	t.Cleanup(func() { keepBotLog(t, filepath.Join(state, "banter.log")) }) // runs after the playground stopped
	url, _ := startCLI(t, vars, append([]string{"playground", "-addr", "127.0.0.1:0", "-dir", state}, args...)...)
	return url
}

// keepBotLog shows a failed test's bot log: its last lines in the test output, all of it as an
// artifact ($BANTER_ARTIFACTS/<test>-banter.log) when artifacts are kept.
func keepBotLog(t *testing.T, path string) {
	if !t.Failed() {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Logf("bot log: %v", err)
		return
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	t.Logf("bot log, last %d of %d lines:\n%s", min(40, len(lines)), len(lines), strings.Join(lines[max(0, len(lines)-40):], "\n"))
	if dir := os.Getenv("BANTER_ARTIFACTS"); dir != "" {
		name := strings.ReplaceAll(t.Name(), "/", "_") + "-banter.log"
		if err := os.MkdirAll(dir, 0o755); err == nil && os.WriteFile(filepath.Join(dir, name), b, 0o644) == nil {
			t.Logf("bot log: %s", filepath.Join(dir, name))
		}
	}
}

// startCLI runs banter with args in this process, from the package's folder, which holds no
// ./banter.yaml (checked: banter would start from it), until it prints the playground's
// address; it returns the address and what was printed before it. It does not change the
// working folder, so that parallel subtests may use it.
func startCLI(t *testing.T, vars map[string]string, args ...string) (url, printed string) {
	t.Helper()
	if _, err := os.Stat(config.DefaultPath); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("./%s in the test's working folder (%v): the playground would start from it", config.DefaultPath, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := dispatch(ctx, env{args: args, stdout: pw, stderr: pw, getenv: func(k string) string { return vars[k] }})
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("banter %v: %v", args, err)
		}
	})
	var out strings.Builder
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if u, ok := strings.CutPrefix(sc.Text(), "banter playground: open "); ok {
			for range 8 { // the lines that say what runs
				if sc.Scan() {
					out.WriteString(sc.Text() + "\n")
				}
			}
			go func() { _, _ = io.Copy(io.Discard, pr) }()
			return strings.TrimSpace(u), out.String()
		}
	}
	cancel()
	t.Fatalf("banter %v did not print the playground's address: %v\n%s", args, <-done, out.String())
	return "", ""
}

// shot saves a screenshot of the page as a test artifact (in $BANTER_ARTIFACTS, default
// the test's temp dir) and returns its path.
func shot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	dir := os.Getenv("BANTER_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
	return p
}

// pageWait is the failure guard of a wait on the page's state; every wait is on an event
// (an element, an attribute), never on the clock.
const pageWait = 90 * time.Second

// waitJS waits until the JavaScript expression is truthy on the page.
func waitJS(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, pageWait)
	defer cancel()
	if _, err := chromedp.Run(wctx, chromedp.Poll[bool]("!!("+expr+")", chromedp.WithPollingInterval(50*time.Millisecond),
		chromedp.WithPollingTimeout(pageWait))); err != nil {
		shot(t, ctx, "failed-"+strings.ReplaceAll(t.Name(), "/", "_"))
		t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
}

// evalJS evaluates a JavaScript expression on the page.
func evalJS[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// do runs page actions or fails the test.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		shot(t, ctx, "failed-"+strings.ReplaceAll(t.Name(), "/", "_"))
		t.Fatalf("%s: %v", what, err)
	}
}

// pageProblems collects what a user would see in the browser's console: uncaught exceptions,
// console errors, log entries at error level (a resource that failed to load), failed
// requests and HTTP error statuses.
type pageProblems struct {
	mu   sync.Mutex // guards following
	list []string
}

// watchPage starts collecting the page's problems; call before navigating.
func watchPage(t *testing.T, ctx context.Context) *pageProblems {
	t.Helper()
	p := &pageProblems{}
	add := func(s string) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.list = append(p.list, s)
	}
	err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			desc := d.Text
			if d.Exception != nil {
				desc += " " + d.Exception.Description
			}
			add(fmt.Sprintf("exception: %s at %s:%d", desc, d.URL, d.LineNumber+1))
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				add("console.error: " + strings.Join(args, " "))
			}
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError {
				add("console: " + e.Entry.Text + " " + e.Entry.URL)
			}
		case *network.EventLoadingFailed:
			if !e.Canceled {
				add("request failed: " + e.ErrorText + " (" + string(e.Type) + ")")
			}
		case *network.EventResponseReceived:
			if e.Response.Status >= 400 {
				add(fmt.Sprintf("HTTP %d: %s", e.Response.Status, e.Response.URL))
			}
		}
	})
	if err != nil {
		t.Fatalf("listen to the page: %v", err)
	}
	return p
}

// check fails the test if the page had any problem so far.
func (p *pageProblems) check(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.list {
		t.Errorf("the page's console: %s", s)
	}
}

// spillsJS lists what does not fit on the page: a card (a section, the header) wider inside
// than its box (scrollWidth > clientWidth), an element that sticks out of its card at the
// left or right, a scroll box that scrolls sideways, a page wider than the window. Text
// truncated on purpose (text-overflow: ellipsis, with its full text on hover) stays inside
// its box and is not counted.
const spillsJS = `(() => {
	const bad = [];
	const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\s+/).join('.') : '');
	const de = document.documentElement;
	if (de.scrollWidth > de.clientWidth) bad.push('the page scrolls sideways: ' + de.scrollWidth + ' > ' + de.clientWidth);
	for (const card of document.querySelectorAll('header, main > section')) {
		if (card.scrollWidth > card.clientWidth) bad.push(name(card) + ': scrollWidth ' + card.scrollWidth + ' > clientWidth ' + card.clientWidth);
		const r = card.getBoundingClientRect();
		for (const e of card.querySelectorAll('*')) {
			const b = e.getBoundingClientRect();
			if (b.width === 0 || b.height === 0 || e.closest('[hidden]')) continue;
			const cut = e.parentElement && e.parentElement.closest('*') && getComputedStyle(e.parentElement).textOverflow === 'ellipsis';
			if (!cut && (b.right > r.right + 0.5 || b.left < r.left - 0.5)) {
				bad.push(name(card) + ' > ' + name(e) + ' sticks out: ' + Math.round(b.left) + '..' + Math.round(b.right) + ' in ' + Math.round(r.left) + '..' + Math.round(r.right) + ' (' + (e.textContent || '').trim().slice(0, 40) + ')');
			}
			const ox = getComputedStyle(e).overflowX;
			if ((ox === 'auto' || ox === 'scroll') && e.scrollWidth > e.clientWidth) bad.push(name(card) + ' > ' + name(e) + ' scrolls sideways: ' + e.scrollWidth + ' > ' + e.clientWidth);
		}
	}
	return bad;
})()`

// checkFits fails the test for everything spillsJS finds.
func checkFits(t *testing.T, ctx context.Context, size string) {
	t.Helper()
	for _, s := range evalJS[[]string](t, ctx, spillsJS) {
		t.Errorf("at %s: %s", size, s)
	}
}

// keepSimRecords shows what the demo brain's OpenAI simulator (and its Gemini face) received
// when the test failed: a line per request and per realtime or Gemini Live client message in
// the test output, and the whole records as artifacts ($BANTER_ARTIFACTS/<test>-openaisim-*.json)
// when artifacts are kept. Register it after startPlayground: it reads the running playground.
func keepSimRecords(t *testing.T, url string) {
	if !t.Failed() {
		return
	}
	var digest strings.Builder
	for _, part := range []string{"requests", "realtime", "gemini/messages"} {
		b, err := getBody(url + "/openai/_sim/" + part)
		if err != nil {
			t.Logf("simulator records: %v", err)
			continue
		}
		if part == "requests" {
			var recs []openaisim.Recorded
			if err := json.Unmarshal(b, &recs); err == nil {
				for _, r := range recs {
					fmt.Fprintf(&digest, "%s %s rule=%q audio=%s took=%s last_user=%.160q\n", r.At.Format("15:04:05.000"),
						r.Endpoint, r.Rule, r.AudioDuration, r.Duration, r.LastUserText)
				}
			}
		} else {
			var evs []openaisim.RealtimeEvent
			if err := json.Unmarshal(b, &evs); err == nil {
				for _, e := range evs {
					var raw bytes.Buffer
					if json.Compact(&raw, e.Raw) != nil || (strings.Contains(raw.String(), `"audio"`) && !strings.Contains(raw.String(), "activity")) {
						continue
					}
					fmt.Fprintf(&digest, "%s %s %s %.240s\n", e.At.Format("15:04:05.000"), e.Session, e.Type, raw.String())
				}
			}
		}
		if dir := os.Getenv("BANTER_ARTIFACTS"); dir != "" {
			p := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+"-openaisim-"+strings.ReplaceAll(part, "/", "-")+".json")
			if err := os.MkdirAll(dir, 0o755); err == nil && os.WriteFile(p, b, 0o644) == nil {
				t.Logf("simulator records: %s", p)
			}
		}
	}
	t.Logf("the OpenAI simulator received (audio chunks left out):\n%s", digest.String())
}

// getBody GETs url and returns its body.
func getBody(url string) ([]byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s %w", url, resp.Status, err)
	}
	return b, nil
}
