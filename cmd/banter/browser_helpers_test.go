package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
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

// startCLI runs banter with args in this process, from an empty folder, until it prints the
// playground's address; it returns the address and what was printed before it.
func startCLI(t *testing.T, vars map[string]string, args ...string) (url, printed string) {
	t.Helper()
	t.Chdir(t.TempDir()) // no ./banter.yaml
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
