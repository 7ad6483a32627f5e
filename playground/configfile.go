package playground

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// configFile is the YAML file the bot runs on. The playground edits it as
// a person would (the bot's watcher reloads it), keeping its comments and
// the keys it does not touch.
type configFile struct {
	path string
}

// read returns the file's bytes ("" when it does not exist yet).
func (f configFile) read() ([]byte, error) {
	b, err := os.ReadFile(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("playground: read %s: %w", f.path, err)
	}
	return b, nil
}

// write replaces the file atomically (a new file renamed over it), so the
// bot never reads half of it.
func (f configFile) write(data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(f.path), ".playground-*.yaml")
	if err != nil {
		return fmt.Errorf("playground: write config: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("playground: write config: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("playground: write config: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		return fmt.Errorf("playground: write config: %w", err)
	}
	return nil
}

// setKeys returns data with each dotted key (e.g. "activity.replyLevelInitiative")
// set to its value, creating the mappings on the way; everything else,
// comments included, stays.
func setKeys(data []byte, set map[string]any) ([]byte, error) {
	var doc yaml.Node
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("playground: the config file is not YAML: %w", err)
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode}
	}
	if len(doc.Content) == 0 {
		doc.Content = []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}
	}
	for _, key := range sortedKeys(set) {
		if err := setKey(doc.Content[0], key, set[key]); err != nil {
			return nil, err
		}
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("playground: render config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("playground: render config: %w", err)
	}
	return out.Bytes(), nil
}

// setKey sets one dotted key under the mapping node m.
func setKey(m *yaml.Node, key string, value any) error {
	var v yaml.Node
	if err := v.Encode(value); err != nil {
		return fmt.Errorf("playground: %s: %w", key, err)
	}
	parts := strings.Split(key, ".")
	for i, p := range parts {
		if p == "" {
			return fmt.Errorf("playground: %q is not a config key (dotted names, e.g. activity.replyLevelInitiative)", key)
		}
		if m.Kind != yaml.MappingNode {
			return fmt.Errorf("playground: %s: %s is not a section", key, strings.Join(parts[:i], "."))
		}
		last := i == len(parts)-1
		var found *yaml.Node
		for j := 0; j+1 < len(m.Content); j += 2 {
			if m.Content[j].Value == p {
				if last {
					v.LineComment = m.Content[j+1].LineComment
					m.Content[j+1] = &v
					return nil
				}
				found = m.Content[j+1]
				break
			}
		}
		if found == nil {
			found = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			if last {
				found = &v
			}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p}, found)
			if last {
				return nil
			}
		}
		m = found
	}
	return nil
}

// lookup returns the value at a dotted key of a decoded YAML document.
func lookup(doc map[string]any, key string) (any, bool) {
	var cur any = doc
	for _, p := range strings.Split(key, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
