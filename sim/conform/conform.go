// Package conform holds banter's requests to the official API
// specifications: Discord's v10 OpenAPI spec and OpenAI's OpenAPI spec with
// its Realtime client events. Tests record what the bot sends to the
// simulators and check each request here, so a request the real service
// would refuse fails a test even if the simulator is lenient.
//
// The specs are cut down (by ./extract) to the operations banter calls and
// the schemas they reference, and embedded; see specs/README.md for their
// origin, specs/LICENSE-* for their licences, and specs/README.md again for
// the two places where the check reads them more loosely than written
// (oneOfAsAnyOf, bitSetsAsDecimalStrings), each because the real API does.
package conform

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed specs/*.json
var specFS embed.FS

// Checker checks requests against one API's spec.
type Checker struct {
	api      string
	prefixes []string // stripped from request paths: "/api/v10", "/v1"...
	ops      []operation
	events   *jsonschema.Schema // realtime client events (OpenAI only)
}

type operation struct {
	method string
	segs   []string // path segments; "{x}" matches any one segment
	body   *jsonschema.Schema
}

// loadAll compiles both specs once; the result is immutable and shared.
var loadAll = sync.OnceValues(func() (map[string]*Checker, error) {
	out := map[string]*Checker{}
	for name, prefixes := range map[string][]string{"discord": {"/api/v10", "/api/v9"}, "openai": {"/v1"}} {
		c, err := load(name, prefixes)
		if err != nil {
			return nil, err
		}
		out[name] = c
	}
	return out, nil
})

// Discord returns the checker for Discord's HTTP API (paths under /api/v9
// or /api/v10).
func Discord() (*Checker, error) { return get("discord") }

// OpenAI returns the checker for OpenAI's API (paths under /v1) and its
// Realtime client events.
func OpenAI() (*Checker, error) { return get("openai") }

func get(name string) (*Checker, error) {
	all, err := loadAll()
	if err != nil {
		return nil, err
	}
	return all[name], nil
}

func load(name string, prefixes []string) (*Checker, error) {
	b, err := specFS.ReadFile("specs/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("conform: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("conform: %s spec: %w", name, err)
	}
	doc = oneOfAsAnyOf(doc)
	if name == "discord" {
		if err := bitSetsAsDecimalStrings(doc); err != nil {
			return nil, fmt.Errorf("conform: %s spec: %w", name, err)
		}
	}
	url := "https://conform.invalid/" + name + ".json"
	comp := jsonschema.NewCompiler()
	// OpenAPI 3.1 schemas are draft 2020-12, but OpenAI's uses draft
	// 2019-09's $recursiveAnchor/$recursiveRef (CompoundFilter), which 2019-09
	// reads as written; the specs use nothing of 2020-12 beyond it.
	comp.DefaultDraft(jsonschema.Draft2019)
	if err := comp.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("conform: %s spec: %w", name, err)
	}
	c := &Checker{api: name, prefixes: prefixes}
	paths, _ := doc.(map[string]any)["paths"].(map[string]any)
	for path, item := range paths {
		for method, op := range item.(map[string]any) {
			o := operation{method: strings.ToUpper(method), segs: strings.Split(strings.Trim(path, "/"), "/")}
			if _, ok := op.(map[string]any)["requestBody"]; ok {
				ptr := "#/paths/" + escapePointer(path) + "/" + method + "/requestBody/content/application~1json/schema"
				if o.body, err = comp.Compile(url + ptr); err != nil {
					return nil, fmt.Errorf("conform: %s %s %s: %w", name, method, path, err)
				}
			}
			c.ops = append(c.ops, o)
		}
	}
	if name == "openai" {
		if c.events, err = comp.Compile(url + "#/components/schemas/RealtimeClientEvent"); err != nil {
			return nil, fmt.Errorf("conform: realtime client events: %w", err)
		}
	}
	return c, nil
}

// oneOfAsAnyOf reads every oneOf of a spec as anyOf. Both specs write
// unions as oneOf whose branches overlap (OpenAI's Responses input item is
// an EasyInputMessage or an InputMessage, and a user message with a list of
// parts is both), so "exactly one" refuses requests the real APIs take;
// "at least one" keeps refusing what matches no branch.
func oneOfAsAnyOf(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = oneOfAsAnyOf(c)
		}
		if one, ok := x["oneOf"]; ok {
			delete(x, "oneOf")
			if prev, ok := x["anyOf"]; ok {
				x["allOf"] = append(asList(x["allOf"]), map[string]any{"anyOf": prev}, map[string]any{"anyOf": one})
				delete(x, "anyOf")
			} else {
				x["anyOf"] = one
			}
		}
	case []any:
		for i, c := range x {
			x[i] = oneOfAsAnyOf(c)
		}
	}
	return v
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// Request checks one HTTP request: the operation must exist in the spec and
// a JSON body (when given) must match its request schema. path is the URL
// path as sent (with the API prefix); body is nil for requests without a
// JSON body (multipart uploads are checked for the operation only).
func (c *Checker) Request(method, path string, body []byte) error {
	rel := path
	for _, p := range c.prefixes {
		if strings.HasPrefix(path, p+"/") {
			rel = strings.TrimPrefix(path, p)
			break
		}
	}
	op := c.match(method, strings.Split(strings.Trim(rel, "/"), "/"))
	if op == nil {
		return fmt.Errorf("conform: %s: %s %s is not an operation of the spec", c.api, method, path)
	}
	if op.body == nil || len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("conform: %s: %s %s: body is not JSON: %w", c.api, method, path, err)
	}
	if err := op.body.Validate(inst); err != nil {
		return fmt.Errorf("conform: %s: %s %s: %w", c.api, method, path, err)
	}
	return nil
}

// RealtimeClientEvent checks one client event sent on a Realtime socket.
func (c *Checker) RealtimeClientEvent(raw []byte) error {
	if c.events == nil {
		return fmt.Errorf("conform: %s has no realtime events", c.api)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("conform: realtime client event is not JSON: %w", err)
	}
	if err := c.events.Validate(inst); err != nil {
		return fmt.Errorf("conform: realtime client event: %w", err)
	}
	return nil
}

// match finds the operation for method and path segments, preferring the
// template with the most literal segments (/users/@me over /users/{id}).
func (c *Checker) match(method string, segs []string) *operation {
	var best *operation
	bestLit := -1
	for i := range c.ops {
		o := &c.ops[i]
		if o.method != method || len(o.segs) != len(segs) {
			continue
		}
		lit := 0
		ok := true
		for j, s := range o.segs {
			if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
				if segs[j] == "" {
					ok = false
				}
				continue
			}
			if s != segs[j] {
				ok = false
				break
			}
			lit++
		}
		if ok && lit > bestLit {
			best, bestLit = o, lit
		}
	}
	return best
}
