package playground

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/banterbot/banter/config"
)

// TestConfigHeaderNamesWhatToLeaveBehind: a fresh playground config opens with a comment naming
// every key that ties it to the simulated server (README, "From the playground to your server",
// tells admins to leave those behind). A file carried over without them holds nothing of the
// simulator (its addresses, its ids, the playground's folder, the demo brain's provider, the
// bot staying a day in its voice room) and is a valid config on its own.
func TestConfigHeaderNamesWhatToLeaveBehind(t *testing.T) {
	w, err := startWorld("banter", true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.close)
	w.geminiDemo = true
	dir := t.TempDir()
	file := configFile{path: filepath.Join(dir, "playground.yaml")}
	if err := w.writeConfig(file, "", dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file.path)
	if err != nil {
		t.Fatal(err)
	}
	var header strings.Builder
	for _, l := range strings.Split(string(data), "\n") {
		if c, ok := strings.CutPrefix(l, "#"); ok {
			header.WriteString(c)
		}
	}
	named := map[string]bool{}
	if _, list, ok := strings.Cut(header.String(), "banter.yaml: "); ok {
		for _, k := range strings.Split(strings.TrimSuffix(strings.TrimSpace(list), "."), ",") {
			named[strings.TrimSpace(k)] = true
		}
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	chosen := freshKeys(nil) // the playground's starting choices: tuning, fine to carry over
	kept := map[string]any{}
	for _, key := range leafKeys(doc, "") {
		left := !named[key]
		for k := range named {
			left = left && !strings.HasPrefix(key, k+".")
		}
		_, isChoice := chosen[key]
		switch {
		case isChoice && !left:
			t.Errorf("%s is the playground's starting choice, yet the header says to leave it behind", key)
		case !isChoice && left:
			t.Errorf("the playground sets %s for the simulated server, but the file's header does not name it:\n%s", key, header.String())
		}
		if left {
			v, _ := lookup(doc, key)
			setPath(kept, key, v)
		}
	}
	out, err := yaml.Marshal(kept)
	if err != nil {
		t.Fatal(err)
	}
	for _, sim := range []string{"127.0.0.1", dir, string(w.guild), string(w.general), "86400", geminiDemoProvider} {
		if strings.Contains(string(out), sim) {
			t.Errorf("carried over, the file still holds %q:\n%s", sim, out)
		}
	}
	real := filepath.Join(t.TempDir(), "banter.yaml")
	if err := os.WriteFile(real, out, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(real, func(string) string { return "" }); err != nil {
		t.Errorf("the carried-over file is not a valid config: %v\n%s", err, out)
	}
}

// leafKeys lists a YAML document's dotted keys down to their values (lists are values).
func leafKeys(m map[string]any, prefix string) []string {
	var keys []string
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			keys = append(keys, leafKeys(sub, prefix+k+".")...)
			continue
		}
		keys = append(keys, prefix+k)
	}
	return keys
}

// setPath sets a dotted key in a nested map, making the maps on its way.
func setPath(m map[string]any, key string, v any) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[p] = sub
		}
		m = sub
	}
	m[parts[len(parts)-1]] = v
}
