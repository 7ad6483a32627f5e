package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
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
	waitJS(t, ctx, "the page", `document.body.dataset.ready === '1' && document.querySelector('#as option[value="you"]') !== null`)
	waitJS(t, ctx, "the demo label", `document.querySelector('#mode').dataset.mode === 'demo'`)
	shot(t, ctx, "playground-1-loaded")

	id := postAs(t, ctx, "you", "what should we cook tonight?", true)
	waitJS(t, ctx, "the bot's reply", fmt.Sprintf(`document.querySelector('#messages li.bot[data-reply-to="%s"]')`, id))
	reply := evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector('#messages li.bot[data-reply-to="%s"] .content').textContent`, id))
	if want := "what should we cook tonight"; !strings.Contains(reply, want) {
		t.Errorf("reply %q does not read the message (%q)", reply, want)
	}
	waitJS(t, ctx, "the Stage A row", fmt.Sprintf(`document.querySelector('#decision-rows tr[data-turn="%s"][data-stage="A"][data-reason="direct_mention"][data-force="true"][data-outcome="allow"]')`, id))
	waitJS(t, ctx, "the Stage B row with its latency", fmt.Sprintf(`document.querySelector('#decision-rows tr[data-turn="%s"][data-stage="B"][data-event="reply_accepted"][data-latency]')`, id))
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
