package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	openaisim "github.com/banterbot/banter/sim/openai"
)

// Browser tests of the playground: Debian's Chromium, headless, driven by chromedp against
// `banter playground` (banter itself, the simulators, the demo brain) in this process. Each
// step saves a screenshot (BANTER_ARTIFACTS names the folder).

// postAs types a message in the composer as member who and sends it; it returns the new
// message's id once the page shows it.
func postAs(t *testing.T, ctx context.Context, who, text string, mention bool) string {
	t.Helper()
	steps := []chromedp.Action[chromedp.Void]{chromedp.SetValue(chromedp.CSS("#as"), who)}
	if mention {
		steps = append(steps, chromedp.Click(chromedp.CSS("#mention")))
	}
	steps = append(steps, chromedp.SendKeys(chromedp.CSS("#text"), text), chromedp.Click(chromedp.CSS("#send")))
	do(t, ctx, "post "+strconv.Quote(text), steps...)
	sel := fmt.Sprintf(`[...document.querySelectorAll('#messages li')].find(li => li.querySelector('.content').textContent.includes(%q) && !li.classList.contains('bot'))`, text)
	waitJS(t, ctx, "the message "+strconv.Quote(text), sel)
	return evalJS[string](t, ctx, sel+".dataset.id")
}

// TestPlaygroundTextAndEagerness: load the page, post a mention and see the bot's reply and
// its decision rows (Stage A direct_mention, forced; Stage B accepted, with latency phases);
// move the eagerness slider and see the next decision use the new value, through the config
// file and the bot's live reload; a bad value is refused with the field named.
func TestPlaygroundTextAndEagerness(t *testing.T) {
	ctx := browser(t)
	url := startPlayground(t, nil)
	do(t, ctx, "load the page", chromedp.Navigate(url))
	waitJS(t, ctx, "the page", `document.body.dataset.ready === '1' && document.querySelector('#as option[value="sam"]') !== null`)
	waitJS(t, ctx, "the demo label", `document.querySelector('#mode').dataset.mode === 'demo'`)
	shot(t, ctx, "playground-1-loaded")

	id := postAs(t, ctx, "sam", "what should we cook tonight?", true)
	waitJS(t, ctx, "the bot's reply", fmt.Sprintf(`document.querySelector('#messages li.bot[data-reply-to="%s"]')`, id))
	reply := evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector('#messages li.bot[data-reply-to="%s"] .content').textContent`, id))
	if want := "what should we cook tonight"; !strings.Contains(reply, want) {
		t.Errorf("reply %q does not read the message (%q)", reply, want)
	}
	waitJS(t, ctx, "the Stage A row", fmt.Sprintf(`document.querySelector('#decision-rows tr[data-turn="%s"][data-stage="A"][data-reason="direct_mention"][data-force="true"][data-outcome="allow"]')`, id))
	waitJS(t, ctx, "the Stage B row with its latency", fmt.Sprintf(`document.querySelector('#decision-rows tr[data-turn="%s"][data-stage="B"][data-event="reply_accepted"][data-latency]')`, id))
	// The reply's cost follows its latency, and the day's spend is in the panel's title.
	waitJS(t, ctx, "the reply's cost", fmt.Sprintf(`Number(document.querySelector('#decision-rows tr[data-turn="%s"][data-cost]')?.dataset.cost) > 0`, id))
	waitJS(t, ctx, "the day's spend", `Number(document.querySelector('#day-spend').dataset.usd) > 0`)
	shot(t, ctx, "playground-2-mention-answered")

	// Move the slider with the mouse, to about 85% of its width.
	const slider = `#controls input[type=range][data-key="activity.replyLevelInitiative"]`
	do(t, ctx, "scroll to the slider", chromedp.ScrollIntoView(chromedp.CSS(slider)))
	box := evalJS[[]float64](t, ctx, fmt.Sprintf(`(() => { const r = document.querySelector('%s').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`, slider))
	// Drag the thumb from the middle (50) to the right.
	y := box[1] + box[3]/2
	do(t, ctx, "drag the slider", chromedp.DragAndDropXY(box[0]+box[2]*0.5, y, box[0]+box[2]*0.7, y, 4))
	level := evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector('%s').value`, slider))
	t.Logf("the slider moved from 50 to %s", level)
	if n, _ := strconv.Atoi(level); n <= 50 {
		t.Fatalf("the slider moved to %q", level)
	}
	waitJS(t, ctx, "the bot's reload", `document.querySelector('#config-status').dataset.outcome === 'reloaded'`)
	waitJS(t, ctx, "the effective config", fmt.Sprintf(`document.querySelector('#effective').textContent.includes('replyLevelInitiative: %s')`, level))

	next := postAs(t, ctx, "alice", "the weather is lovely today", false)
	waitJS(t, ctx, "the next decision with the new eagerness", fmt.Sprintf(
		`document.querySelector('#decision-rows tr[data-turn="%s"][data-stage="A"][data-reason="initiative_channel"][data-eagerness="%s"]')`, next, level))
	shot(t, ctx, "playground-3-eagerness")

	// A value the config refuses: the bot names the field and keeps the slider's value.
	const number = `#controls input[type=number][data-key="activity.replyLevelInitiative"]`
	evalJS[bool](t, ctx, fmt.Sprintf(`(() => { document.querySelector('%s').select(); return true; })()`, number))
	do(t, ctx, "type 150", chromedp.SendKeys(chromedp.CSS(number), "150\t"))
	waitJS(t, ctx, "the refusal naming the field", `document.querySelector('#config-status').dataset.outcome === 'rejected' && document.querySelector('#config-status').textContent.includes('activity.replyLevelInitiative')`)
	waitJS(t, ctx, "the effective config unchanged", fmt.Sprintf(`document.querySelector('#effective').textContent.includes('replyLevelInitiative: %s')`, level))
	shot(t, ctx, "playground-4-bad-edit")
}

// fakeMicrophone writes the WAV Chromium plays as its microphone
// (--use-file-for-fake-audio-capture, looped): speech, as the OpenAI simulator synthesizes
// it, with a short pause.
func fakeMicrophone(t *testing.T) string {
	t.Helper()
	speech := openaisim.Synthesize("excuse me, sorry to jump in, hold on a second, wait for me please", "echo", 1)
	pause := make([]byte, 2*24000/4) // 250 ms
	p := filepath.Join(t.TempDir(), "microphone.wav")
	if err := os.WriteFile(p, openaisim.EncodeWAV(append(speech, pause...), 24000), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlaygroundVoice: join the voice room with a fake microphone (muted at first), say a
// caption that addresses the bot and hear its spoken answer reach the page's audio output
// (PCM decoded from the bot's Opus, and signal measured after the speakers' gain); then
// unmute, speak over the bot, and see it stop.
func TestPlaygroundVoice(t *testing.T) {
	ctx := browser(t,
		chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("use-file-for-fake-audio-capture", fakeMicrophone(t)))
	url := startPlayground(t, nil)
	do(t, ctx, "load the page", chromedp.Navigate(url))
	waitJS(t, ctx, "the page", `document.body.dataset.ready === '1' && document.querySelector('#as option[value="sam"]') !== null`)
	id := postAs(t, ctx, "sam", "are you in the voice room?", true)
	waitJS(t, ctx, "the bot's text reply", fmt.Sprintf(`document.querySelector('#messages li.bot[data-reply-to="%s"]')`, id))

	// Then unmute at once: the rest of the reply is the time left to talk over it.
	bot := sayToTheBot(t, ctx, "hey banter, tell me something fun about the weather")
	shot(t, ctx, "playground-5-voice-reply")

	do(t, ctx, "unmute: the microphone speaks over the bot", chromedp.Click(chromedp.CSS("#mute")))
	waitJS(t, ctx, "the bot interrupted", `Number(document.querySelector('#voice-notice').dataset.interrupted) >= 1`)
	waitJS(t, ctx, "the bot silent", fmt.Sprintf(`document.querySelector('#participants li[data-user="%s"][data-speaking="0"]')`, bot))
	// After it said it stopped, at most what was already on its way arrived.
	after := evalJS[float64](t, ctx, `Number(document.querySelector('#audio-stats').dataset.botSamples) - Number(document.querySelector('#voice-notice').dataset.botSamplesAtStop)`)
	if after > 48000 {
		t.Errorf("%.1f s of the bot's voice arrived after it reported the interruption", after/48000)
	}
	shot(t, ctx, "playground-6-barge-in")
}

// sayToTheBot joins the voice room with the microphone muted, says caption, and waits for the
// voice Stage A admission, the bot speaking, and half a second of its voice decoded into the
// page with signal at the speakers. It returns the bot's id.
func sayToTheBot(t *testing.T, ctx context.Context, caption string) string {
	t.Helper()
	bot := evalJS[string](t, ctx, `PG.info.bot_id`)
	waitJS(t, ctx, "the bot in the voice room", fmt.Sprintf(`document.querySelector('#participants li[data-user="%s"]')`, bot))
	do(t, ctx, "join voice, muted", chromedp.Click(chromedp.CSS("#join-muted")), chromedp.Click(chromedp.CSS("#join")))
	waitJS(t, ctx, "the microphone, muted", `document.querySelector('#mic-status').dataset.state === 'muted'`)
	waitJS(t, ctx, "end-to-end encryption", `['active', 'off'].includes(document.querySelector('#voice-link').dataset.e2ee)`)
	do(t, ctx, "say the caption", chromedp.SendKeys(chromedp.CSS("#caption"), caption), chromedp.Click(chromedp.CSS("#say")))
	waitJS(t, ctx, "the voice Stage A decision", `document.querySelector('#decision-rows tr[data-pipeline="voice"][data-stage="A"][data-outcome="allow"]')`)
	waitJS(t, ctx, "the bot speaking", fmt.Sprintf(`document.querySelector('#participants li[data-user="%s"][data-speaking="1"]')`, bot))
	waitJS(t, ctx, "the bot's voice at the audio output", `(() => { const d = document.querySelector('#audio-stats').dataset;
		return Number(d.botSamples) >= 24000 && Number(d.botPeak) > 1000 && Number(d.outMs) >= 300 && Number(d.outPeak) > 0.02; })()`)
	return bot
}

// TestPlaygroundWithoutMicrophone: a browser with no microphone (and no permission) joins the
// voice room: the page says so, and text still works.
func TestPlaygroundWithoutMicrophone(t *testing.T) {
	ctx := browser(t, chromedp.Flag("deny-permission-prompts", true))
	url := startPlayground(t, nil)
	do(t, ctx, "load the page", chromedp.Navigate(url))
	waitJS(t, ctx, "the page", `document.body.dataset.ready === '1' && document.querySelector('#as option[value="sam"]') !== null`)
	do(t, ctx, "join voice", chromedp.Click(chromedp.CSS("#join")))
	waitJS(t, ctx, "the microphone problem said", `['denied', 'missing', 'unavailable', 'error'].includes(document.querySelector('#mic-status').dataset.state) &&
		document.querySelector('#mic-status').textContent.includes('text works')`)
	id := postAs(t, ctx, "sam", "can you still read me?", true)
	waitJS(t, ctx, "the bot's reply", fmt.Sprintf(`document.querySelector('#messages li.bot[data-reply-to="%s"]')`, id))
	shot(t, ctx, "playground-7-no-microphone")
}
