// Command extract cuts the official OpenAPI specs down to what banter's
// request-conformance check needs: the JSON request-body schemas of the
// operations banter calls, the Realtime client event schemas, and every
// component schema they reference. It writes sim/conform/specs/*.json,
// which package conform embeds. Run it again when the specs are updated:
//
//	go run ./sim/conform/extract -src /work/shared/reference/specs -out sim/conform/specs
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// spec names one source spec and what to keep of it.
type spec struct {
	src, out string
	ops      []string // "METHOD /path" as the spec spells the path
	schemas  []string // extra component schemas kept as roots
}

var specs = []spec{
	{
		src: "discord-openapi.json", out: "discord.json",
		ops: []string{
			"GET /gateway", "GET /gateway/bot", "GET /users/@me", "GET /users/{user_id}", "GET /applications/@me",
			"GET /guilds/{guild_id}", "PATCH /guilds/{guild_id}", "GET /guilds/{guild_id}/channels", "GET /guilds/{guild_id}/roles",
			"GET /guilds/{guild_id}/members", "GET /guilds/{guild_id}/members/{user_id}",
			"PATCH /guilds/{guild_id}/members/{user_id}", "PATCH /guilds/{guild_id}/members/@me",
			"GET /guilds/{guild_id}/threads/active", "GET /channels/{channel_id}",
			"GET /channels/{channel_id}/messages", "POST /channels/{channel_id}/messages",
			"GET /channels/{channel_id}/messages/{message_id}", "PATCH /channels/{channel_id}/messages/{message_id}",
			"DELETE /channels/{channel_id}/messages/{message_id}", "POST /channels/{channel_id}/typing",
			"POST /channels/{channel_id}/threads", "POST /channels/{channel_id}/messages/{message_id}/threads",
			"PUT /channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/@me",
			"DELETE /channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/@me",
			"DELETE /channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/{user_id}",
			"GET /channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}",
			"DELETE /channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}",
			"DELETE /channels/{channel_id}/messages/{message_id}/reactions",
			"GET /applications/{application_id}/commands", "POST /applications/{application_id}/commands",
			"PUT /applications/{application_id}/commands", "GET /applications/{application_id}/commands/{command_id}",
			"DELETE /applications/{application_id}/commands/{command_id}",
			"GET /applications/{application_id}/guilds/{guild_id}/commands",
			"POST /applications/{application_id}/guilds/{guild_id}/commands",
			"PUT /applications/{application_id}/guilds/{guild_id}/commands",
			"GET /applications/{application_id}/guilds/{guild_id}/commands/{command_id}",
			"DELETE /applications/{application_id}/guilds/{guild_id}/commands/{command_id}",
			"POST /interactions/{interaction_id}/{interaction_token}/callback",
			"POST /webhooks/{webhook_id}/{webhook_token}",
			"PATCH /webhooks/{webhook_id}/{webhook_token}/messages/@original",
			"GET /webhooks/{webhook_id}/{webhook_token}/messages/@original",
			"DELETE /webhooks/{webhook_id}/{webhook_token}/messages/@original",
			"GET /webhooks/{webhook_id}/{webhook_token}/messages/{message_id}",
			"PATCH /webhooks/{webhook_id}/{webhook_token}/messages/{message_id}",
			"DELETE /webhooks/{webhook_id}/{webhook_token}/messages/{message_id}",
		},
	},
	{
		src: "openai-openapi.json", out: "openai.json",
		ops: []string{
			"POST /responses", "POST /chat/completions", "POST /audio/speech", "POST /audio/transcriptions",
			"GET /models", "GET /models/{model}", "POST /embeddings",
		},
		schemas: []string{"RealtimeClientEvent"},
	},
}

func main() {
	src := flag.String("src", "", "directory holding the official specs and their LICENSE-* files")
	out := flag.String("out", "sim/conform/specs", "output directory")
	flag.Parse()
	if *src == "" {
		fmt.Fprintln(os.Stderr, "extract: -src is required")
		os.Exit(2)
	}
	for _, s := range specs {
		if err := extract(*src, *out, s); err != nil {
			fmt.Fprintln(os.Stderr, "extract:", err)
			os.Exit(1)
		}
	}
	lic, _ := filepath.Glob(filepath.Join(*src, "LICENSE-*"))
	// specs/README.md is the project's own (origin of the cuts, where the check departs
	// from them): not copied.
	for _, l := range lic {
		if err := copyFile(l, filepath.Join(*out, filepath.Base(l))); err != nil {
			fmt.Fprintln(os.Stderr, "extract:", err)
			os.Exit(1)
		}
	}
}

func extract(srcDir, outDir string, s spec) error {
	b, err := os.ReadFile(filepath.Join(srcDir, s.src))
	if err != nil {
		return err
	}
	// Numbers stay json.Number: bounds such as 2^54-1 (permission bit sets) do not fit a
	// float64, which would round them up.
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("%s: %w", s.src, err)
	}
	paths, _ := doc["paths"].(map[string]any)
	all := doc["components"].(map[string]any)["schemas"].(map[string]any)
	keptPaths := map[string]any{}
	roots := []any{}
	for _, op := range s.ops {
		method, path, _ := strings.Cut(op, " ")
		item, _ := paths[path].(map[string]any)
		o, _ := item[strings.ToLower(method)].(map[string]any)
		if o == nil {
			return fmt.Errorf("%s: no operation %s", s.src, op)
		}
		kept := map[string]any{"operationId": o["operationId"]}
		if body := jsonBody(o); body != nil {
			kept["requestBody"] = map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": body}}}
			roots = append(roots, body)
		}
		p, _ := keptPaths[path].(map[string]any)
		if p == nil {
			p = map[string]any{}
			keptPaths[path] = p
		}
		p[strings.ToLower(method)] = kept
	}
	schemas := map[string]any{}
	for _, name := range s.schemas {
		roots = append(roots, map[string]any{"$ref": "#/components/schemas/" + name})
	}
	for len(roots) > 0 {
		v := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		for _, ref := range refs(v) {
			name := strings.TrimPrefix(ref, "#/components/schemas/")
			if name == ref {
				return fmt.Errorf("%s: unsupported $ref %q", s.src, ref)
			}
			if _, seen := schemas[name]; seen {
				continue
			}
			sc, ok := all[name]
			if !ok {
				return fmt.Errorf("%s: dangling $ref %q", s.src, ref)
			}
			schemas[name] = sc
			roots = append(roots, sc)
		}
	}
	outDoc := map[string]any{
		"openapi":    doc["openapi"],
		"info":       doc["info"],
		"x-extract":  fmt.Sprintf("cut from %s by sim/conform/extract: %d operations, %d schemas", s.src, len(s.ops), len(schemas)),
		"paths":      keptPaths,
		"components": map[string]any{"schemas": schemas},
	}
	ob, err := json.MarshalIndent(outDoc, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(outDir, s.out), append(ob, '\n'), 0o644)
}

// jsonBody returns the operation's application/json request schema, or nil.
func jsonBody(op map[string]any) any {
	rb, _ := op["requestBody"].(map[string]any)
	content, _ := rb["content"].(map[string]any)
	if j, ok := content["application/json"].(map[string]any); ok {
		return j["schema"]
	}
	// Multipart-only operations (transcriptions): keep the form's schema,
	// which the check applies to the form fields.
	if m, ok := content["multipart/form-data"].(map[string]any); ok {
		return m["schema"]
	}
	return nil
}

// refs lists every "$ref" string under v, sorted.
func refs(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, c := range t {
				if s, ok := c.(string); ok && k == "$ref" {
					out = append(out, s)
					continue
				}
				walk(c)
			}
		case []any:
			for _, c := range t {
				walk(c)
			}
		}
	}
	walk(v)
	sort.Strings(out)
	return out
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
