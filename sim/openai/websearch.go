package openaisim

import (
	"strings"
	"unicode/utf8"
)

// The hosted web_search tool of the Responses API: a request offering
// tools [{"type":"web_search"}] may be answered with a web_search_call
// output item (the search the model ran) and a message whose output_text
// cites the results with url_citation annotations. What is "found" is
// scripted (Reply.WebSearch); the simulator never goes online.
// https://platform.openai.com/docs/guides/tools-web-search

// WebSearch scripts a hosted web search: the model searches for Query and
// cites Results in its reply. It applies only when the request offers the
// web_search tool (and tool_choice is not "none"), as a real model can
// only search then.
type WebSearch struct {
	// Query is what the model searched for; "" is the last user input.
	Query string `yaml:"query" json:"query,omitempty"`
	// Results are the pages found, cited in the reply in order.
	Results []WebResult `yaml:"results" json:"results,omitempty"`
}

// WebResult is one page a web search found.
type WebResult struct {
	URL   string `yaml:"url" json:"url"`
	Title string `yaml:"title" json:"title"`
}

// webSearchTypes are the Responses tool types of the hosted web search.
var webSearchTypes = []string{"web_search", "web_search_2025_08_26", "web_search_preview", "web_search_preview_2025_03_11"}

// isWebSearch reports whether a tool type is the hosted web search.
func isWebSearch(typ string) bool { return contains(webSearchTypes, typ) }

// offersWebSearch reports whether the request offers the hosted web search.
func offersWebSearch(tools []Tool) bool {
	for _, t := range tools {
		if isWebSearch(t.Type) {
			return true
		}
	}
	return false
}

// searchPlan is a web search the reply runs.
type searchPlan struct {
	query   string
	results []WebResult
}

// defaultSearch is the search a model forced to search (tool_choice) runs
// without a script: one result, on example.com.
func defaultSearch(lastUser string) *searchPlan {
	q := strings.TrimSpace(lastUser)
	if q == "" {
		q = "news"
	}
	return &searchPlan{query: q, results: []WebResult{{
		URL: "https://example.com/search?q=" + strings.ReplaceAll(q, " ", "+"), Title: "Results for " + q,
	}}}
}

// webSearchItem is the web_search_call output item.
type webSearchItem struct {
	ID     string          `json:"id"`
	Type   string          `json:"type"`
	Status string          `json:"status"`
	Action webSearchAction `json:"action"`
}

type webSearchAction struct {
	Type    string      `json:"type"`
	Query   string      `json:"query"`
	Queries []string    `json:"queries"`
	Sources []webSource `json:"sources,omitempty"`
}

type webSource struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// urlCitation is an output_text annotation citing a web page; the indexes
// count characters (Unicode code points) of the text, end exclusive.
type urlCitation struct {
	Type       string `json:"type"`
	StartIndex int    `json:"start_index"`
	EndIndex   int    `json:"end_index"`
	URL        string `json:"url"`
	Title      string `json:"title"`
}

// searchItem renders the plan's web_search_call; sources are listed only
// when the request asked for them (include
// "web_search_call.action.sources"), as on OpenAI.
func (s *Server) searchItem(sp *searchPlan, withSources bool) webSearchItem {
	it := webSearchItem{ID: s.newID("ws"), Type: "web_search_call", Status: "completed",
		Action: webSearchAction{Type: "search", Query: sp.query, Queries: []string{sp.query}}}
	if withSources {
		for _, r := range sp.results {
			it.Action.Sources = append(it.Action.Sources, webSource{Type: "url", URL: r.URL})
		}
	}
	return it
}

// cite makes text cite every result: a result whose URL the text already
// holds is annotated where it stands; the others are appended as markdown
// links, " ([title](url))", each annotated over its link.
func cite(text string, results []WebResult) (string, []any) {
	anns := []any{}
	for _, r := range results {
		if i := strings.Index(text, r.URL); i >= 0 {
			start := utf8.RuneCountInString(text[:i])
			anns = append(anns, urlCitation{Type: "url_citation", StartIndex: start,
				EndIndex: start + utf8.RuneCountInString(r.URL), URL: r.URL, Title: r.Title})
			continue
		}
		title := r.Title
		if title == "" {
			title = r.URL
		}
		link := "[" + title + "](" + r.URL + ")"
		text += " ("
		start := utf8.RuneCountInString(text)
		text += link + ")"
		anns = append(anns, urlCitation{Type: "url_citation", StartIndex: start,
			EndIndex: start + utf8.RuneCountInString(link), URL: r.URL, Title: r.Title})
	}
	return text, anns
}
