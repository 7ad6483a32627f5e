package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPlaygroundMemoryPanel: on the page, alice says "I have a cat named Miso" and the memory
// panel shows the fact as it forms (with its source message); bob's later question to the bot
// has a reply prompt carrying it, and the reply says it; alice's forget button runs /memory
// forget and the fact leaves the panel; bob's pause button pauses him; a member added on the
// page gets a card; the tuning panel's switch turns memory off. Nothing reaches the browser's
// console.
func TestPlaygroundMemoryPanel(t *testing.T) {
	ctx := browser(t)
	problems := watchPage(t, ctx)
	url, _ := memoryPlayground(t)
	do(t, ctx, "load the page", chromedp.Navigate(url))
	waitJS(t, ctx, "the page", `document.body.dataset.ready === '1' && document.querySelector('#as option[value="alice"]') !== null`)
	waitJS(t, ctx, "the memory panel, on", `document.querySelector('#memory').dataset.enabled === '1' && document.querySelector('#memory .mem-member[data-member="alice"][data-facts="0"]')`)

	postAs(t, ctx, "alice", "I have a cat named Miso", false)
	const aliceFact = `document.querySelector('#memory .mem-member[data-member="alice"] li[data-fact-id]')`
	waitJS(t, ctx, "alice's fact in the panel", aliceFact+`?.querySelector('.statement').textContent === 'alice has a cat named Miso'`)
	if src := evalJS[string](t, ctx, aliceFact+`.querySelector('.source').textContent`); !strings.Contains(src, `#general: “I have a cat named Miso”`) {
		t.Errorf("the fact's source reads %q", src)
	}
	shot(t, ctx, "playground-memory-1-fact")

	id := postAs(t, ctx, "bob", "what is the name of alice's cat?", true)
	waitJS(t, ctx, "the bot's reply to bob", fmt.Sprintf(`document.querySelector('#messages li.bot[data-reply-to="%s"]')`, id))
	if reply := evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector('#messages li.bot[data-reply-to="%s"] .content').textContent`, id)); !strings.Contains(reply, "alice has a cat named Miso") {
		t.Errorf("the demo brain's reply %q does not use the fact", reply)
	}
	var reqs []struct{ LastUserText string }
	httpDo(t, "GET", url+"/openai/_sim/requests", nil, &reqs)
	carried := false
	for _, r := range reqs {
		carried = carried || strings.Contains(r.LastUserText, "Message to answer: msg "+id) && strings.Contains(r.LastUserText, "alice has a cat named Miso")
	}
	if !carried {
		t.Errorf("no reply prompt of bob's question carries alice's fact")
	}

	do(t, ctx, "forget alice's fact", chromedp.Click(chromedp.CSS(`#memory .mem-member[data-member="alice"] li[data-fact-id] button.forget`)))
	waitJS(t, ctx, "the bot's answer", `document.querySelector('#memory-status').dataset.state === 'done' && document.querySelector('#memory-status').textContent.includes('Forgotten: fact 1')`)
	waitJS(t, ctx, "the fact gone from the panel", `document.querySelector('#memory .mem-member[data-member="alice"][data-facts="0"]')`)
	do(t, ctx, "pause bob", chromedp.Click(chromedp.CSS(`#memory .mem-member[data-member="bob"] button.pause`)))
	waitJS(t, ctx, "bob paused", `document.querySelector('#memory .mem-member[data-member="bob"][data-paused="1"] .paused-tag')`)
	shot(t, ctx, "playground-memory-2-forgotten")

	do(t, ctx, "add a member", chromedp.SendKeys(chromedp.CSS("#new-member"), "dana"), chromedp.Click(chromedp.CSS("#add-member button")))
	waitJS(t, ctx, "dana's card", `document.querySelector('#memory .mem-member[data-member="dana"][data-facts="0"]')`)

	// The tuning panel's memory switch turns it off through the config; the panel says so.
	const toggle = `#controls input[type=checkbox][data-key="memory.enabled"]`
	waitJS(t, ctx, "the memory switch, on", `document.querySelector('`+toggle+`').checked`)
	do(t, ctx, "turn memory off", chromedp.Click(chromedp.CSS(toggle)))
	waitJS(t, ctx, "the panel, off", `document.querySelector('#memory').dataset.enabled === '0'`)
	problems.check(t)
}
