package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPlaygroundFits: at a laptop's and a desktop's screen size, the page a newcomer uses (a
// mention answered, "Try a conversation" played through the live bot, every fold open) has
// nothing spilling out of its cards, readable decision rows (no confidence where none was
// measured, the message box named after its channel, the favicon), and nothing in the
// browser's console: no errors, no failed requests.
func TestPlaygroundFits(t *testing.T) {
	for _, size := range []struct {
		w, h                int64
		eagerness, answered int // the text eagerness "Try a conversation" runs at, and what the demo brain answers of it
	}{{1280, 800, 50, 2}, {1920, 1080, 90, 7}} {
		name := fmt.Sprintf("%dx%d", size.w, size.h)
		t.Run(name, func(t *testing.T) {
			// The sizes share nothing (a browser and a playground each) and mostly wait on
			// the demo brain: they run side by side.
			t.Parallel()
			ctx := browser(t)
			problems := watchPage(t, ctx)
			url := startPlayground(t, nil)
			do(t, ctx, "load the page at "+name, chromedp.EmulateViewport(size.w, size.h), chromedp.Navigate(url))
			waitJS(t, ctx, "the page", `document.body.dataset.ready === '1' && document.querySelector('#as option[value="sam"]') !== null`)
			waitJS(t, ctx, "the message box named after #general", `document.querySelector('#text').placeholder === 'Message #general'`)
			waitJS(t, ctx, "the live indicator", `document.querySelector('#conn').dataset.state === 'live'`)
			waitJS(t, ctx, "the demo brain's word on speech without a caption", `!document.querySelector('#demo-voice-note').hidden`)
			for _, icon := range []string{"/favicon.ico", "/static/favicon.svg"} {
				if resp, err := http.Get(url + icon); err != nil || resp.StatusCode != http.StatusOK {
					t.Errorf("GET %s: %v %v", icon, resp, err)
				} else {
					resp.Body.Close()
				}
			}

			id := postAs(t, ctx, "sam", "what should we cook tonight?", true)
			waitJS(t, ctx, "the bot's reply", fmt.Sprintf(`document.querySelector('#messages li.bot[data-reply-to="%s"]')`, id))
			if reply := evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector('#messages li.bot[data-reply-to="%s"] .content').textContent`, id)); !strings.Contains(reply, "sam") {
				t.Errorf("the reply %q does not name sam", reply)
			}
			stageB := fmt.Sprintf(`document.querySelector('#decision-rows tr[data-turn="%s"][data-stage="B"][data-latency]')`, id)
			waitJS(t, ctx, "the Stage B row with its latency", stageB)
			if sig := evalJS[string](t, ctx, stageB+`.querySelector('.signal').textContent`); strings.ContainsAny(sig, "0123456789") {
				t.Errorf("the Stage B row shows a confidence: %q", sig)
			}
			if lat := evalJS[string](t, ctx, stageB+`.querySelector('.latency').textContent`); !strings.Contains(lat, "total") || strings.Contains(lat, "-") {
				t.Errorf("the latency cell reads %q", lat)
			}

			if size.eagerness != 50 {
				const number = `#controls input[type=number][data-key="activity.replyLevelInitiative"]`
				evalJS[bool](t, ctx, fmt.Sprintf(`(() => { document.querySelector('%s').select(); return true; })()`, number))
				do(t, ctx, "type the eagerness", chromedp.SendKeys(chromedp.CSS(number), fmt.Sprintf("%d\t", size.eagerness)))
				waitJS(t, ctx, "the bot's reload", fmt.Sprintf(`document.querySelector('#effective').textContent.includes('replyLevelInitiative: %d')`, size.eagerness))
			}
			tryConversation(t, ctx, size.answered)
			evalJS[bool](t, ctx, `(() => { document.querySelectorAll('details').forEach(d => d.open = true); return true; })()`)
			checkFits(t, ctx, name)
			shot(t, ctx, "playground-fit-"+name)
			problems.check(t)
		})
	}
}

// tryConversation clicks "Try a conversation" and waits for the run to end: the line addressed
// to the bot is answered, "lol" and the line for someone else are not, the bot answered as many
// lines as want says, and the decision panel marks the run.
func tryConversation(t *testing.T, ctx context.Context, want int) {
	t.Helper()
	do(t, ctx, "try a conversation", chromedp.Click(chromedp.CSS("#try")))
	waitJS(t, ctx, "the run's end", `document.querySelector('#try-status').dataset.done === '1'`)
	lines := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#try-status li')].map(li => li.textContent)`)
	verdicts := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#try-status li')].map(li => li.dataset.verdict || '')`)
	t.Logf("try a conversation:\n%s", strings.Join(lines, "\n"))
	for i, l := range lines {
		switch {
		case strings.Contains(l, "what should we order tonight"):
			if verdicts[i] != "answered" {
				t.Errorf("the line addressed to the bot: %q", l)
			}
		case strings.HasPrefix(l, "sam: lol"), strings.Contains(l, "alice, did you see"):
			if !strings.HasPrefix(verdicts[i], "quiet") {
				t.Errorf("chatter answered: %q", l)
			}
		}
	}
	if got := evalJS[string](t, ctx, `document.querySelector('#try-status').dataset.answered`); got != fmt.Sprint(want) {
		t.Errorf("the bot answered %s of the %d lines, want %d", got, len(lines), want)
	}
	waitJS(t, ctx, "the run marked in the decision panel", `document.querySelector('#decision-rows tr.run-marker[data-edge="start"]') &&
		document.querySelector('#decision-rows tr.run-marker[data-edge="end"]') && document.querySelectorAll('#decision-rows tr.in-run').length >= 9`)
	// Every text row names its turn's message, also a decision that came before its message.
	waitJS(t, ctx, "every text row with its message", `[...document.querySelectorAll('#decision-rows tr[data-pipeline="text"] td.turn')].every(td => td.textContent.includes(': '))`)
}

// TestPlaygroundRealtimeVoice: with voice.mode realtime (the bot's voice through the OpenAI
// Realtime API, here the simulator's, with the demo brain), joining the voice room and saying
// a caption addressed to the bot gets a voice Stage A admission, the bot speaking, and its
// voice decoded into the page and at the audio output; nothing in the browser's console.
func TestPlaygroundRealtimeVoice(t *testing.T) {
	for _, tc := range []struct{ provider, config, shot string }{
		{"openai", realtimeVoiceConfig, "playground-8-realtime-voice"},
		// With no Gemini key the playground points voice.geminiRealtime at the demo brain's
		// Gemini face: the member is heard through Gemini's transcription and answered by it.
		{"gemini", realtimeVoiceConfig + "  realtime:\n    provider: gemini\n", "playground-8b-realtime-voice-gemini"},
	} {
		t.Run(tc.provider, func(t *testing.T) { playgroundRealtimeVoice(t, tc.provider, tc.config, tc.shot) })
	}
}

func playgroundRealtimeVoice(t *testing.T, provider, config, shotName string) {
	ctx := browser(t,
		chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("use-file-for-fake-audio-capture", fakeMicrophone(t)))
	problems := watchPage(t, ctx)
	cfg := filepath.Join(t.TempDir(), "banter.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	url := startPlayground(t, nil, "-config", cfg)
	t.Cleanup(func() { keepSimRecords(t, url) }) // before the playground stops
	do(t, ctx, "load the page", chromedp.Navigate(url))
	waitJS(t, ctx, "the page", `document.body.dataset.ready === '1' && document.querySelector('#as option[value="sam"]') !== null`)
	waitJS(t, ctx, "the effective config in realtime mode", `document.querySelector('#effective').textContent.includes('mode: realtime')`)
	bot := sayToTheBot(t, ctx, "hey banter, what's the weather like today?")
	waitJS(t, ctx, "the bot silent again", fmt.Sprintf(`document.querySelector('#participants li[data-user="%s"][data-speaking="0"]')`, bot))
	waitJS(t, ctx, "the bot's realtime session", `document.querySelector('#log li[data-event="realtime_session_started"]')`)
	if provider == "gemini" {
		waitJS(t, ctx, "the realtime session on Gemini", `document.querySelector('#log li[data-event="realtime_session_started"]').textContent.includes('provider=gemini')`)
		waitJS(t, ctx, "the answer voiced by Gemini", `[...document.querySelectorAll('#log li[data-event="realtime_reply_requested"]')].some((li) => li.textContent.includes('provider=gemini'))`)
	}
	checkFits(t, ctx, "1600x1000")
	shot(t, ctx, shotName)
	problems.check(t)
}
