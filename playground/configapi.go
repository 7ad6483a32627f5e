package playground

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/banterbot/banter/config"
)

// controlKeys are the settings the page shows as controls.
var controlKeys = []string{
	"bot.name",
	"activity.replyLevelInitiative", "activity.replyLevelNonInitiative", "voice.replyEagerness",
	"permissions.allowInitiativeReplies",
	"llm.model", "llm.directAddressClassifier.enabled", "llm.directAddressClassifier.model",
	"voice.mode", "voice.replyDecisionLlm.enabled", "voice.replyDecisionLlm.model", "voice.generationLlm.model",
	"voice.sttPipeline.transcriptionModel", "voice.sttPipeline.ttsModel", "voice.sttPipeline.ttsVoice",
	"voice.bargeIn.policy",
	"memory.enabled",
}

// reloadGuard bounds the wait for the bot to report a reload of an edit
// (the watcher reacts within a fraction of a second; this is a failure
// guard for a loaded machine).
const reloadGuard = 20 * time.Second

// configView is GET /api/config and the answer to an edit.
type configView struct {
	Outcome   string         `json:"outcome,omitempty"` // reloaded, unchanged, needs_restart, rejected, written
	Error     string         `json:"error,omitempty"`
	Restored  bool           `json:"restored,omitempty"`
	Sections  []string       `json:"sections,omitempty"`
	Path      string         `json:"path"`
	File      string         `json:"file"`
	Effective string         `json:"effective"`
	Values    map[string]any `json:"values"`
}

// view renders the file and the configuration in force.
func (s *server) view() (configView, error) {
	v := configView{Path: s.file.path, Values: map[string]any{}}
	data, err := s.file.read()
	if err != nil {
		return v, err
	}
	v.File = config.RedactText(string(data)) // shown, never written back
	w := s.watcher.Load()
	if w == nil {
		return v, errNoWatcher
	}
	eff, err := w.Current().Redacted()
	if err != nil {
		return v, err
	}
	v.Effective = string(eff)
	var doc map[string]any
	if err := yaml.Unmarshal(eff, &doc); err != nil {
		return v, fmt.Errorf("playground: read effective config: %w", err)
	}
	for _, k := range controlKeys {
		if x, ok := lookup(doc, k); ok {
			v.Values[k] = x
		}
	}
	return v, nil
}

func (s *server) getConfig(w http.ResponseWriter, _ *http.Request) {
	v, err := s.view()
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// postConfig is POST /api/config {"set": {"activity.replyLevelInitiative": 80, ...}}:
// it edits the bot's config file and answers with what the bot did about it
// (reloaded, or rejected with the field named: then the previous file is
// put back and the bot keeps its configuration).
func (s *server) postConfig(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Set map[string]any `json:"set"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || len(in.Set) == 0 {
		writeError(w, http.StatusBadRequest, fmt.Errorf(`body: want {"set": {"dotted.key": value, ...}}: %v`, err))
		return
	}
	if s.watcher.Load() == nil {
		writeError(w, http.StatusServiceUnavailable, errNoWatcher)
		return
	}
	res, status, err := s.edit(r.Context(), in.Set)
	if err != nil {
		writeError(w, status, err)
		return
	}
	v, err := s.view()
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	v.Outcome, v.Error, v.Restored, v.Sections = res.Outcome, config.RedactText(res.Error), res.Restored, res.Sections
	writeJSON(w, status, v)
}

// edit writes the change and waits for the bot's verdict.
func (s *server) edit(ctx context.Context, set map[string]any) (configView, int, error) {
	s.editMu.Lock()
	defer s.editMu.Unlock()
	old, err := s.file.read()
	if err != nil {
		return configView{}, http.StatusInternalServerError, err
	}
	next, err := setKeys(old, set)
	if err != nil {
		return configView{}, http.StatusBadRequest, err
	}
	oldCfg, oldErr := s.parse(old)
	nextCfg, nextErr := s.parse(next)
	if oldErr == nil && nextErr == nil && reflect.DeepEqual(oldCfg, nextCfg) {
		if err := s.file.write(next); err != nil {
			return configView{}, http.StatusInternalServerError, err
		}
		return configView{Outcome: "unchanged"}, http.StatusOK, nil
	}
	_, events, cancel := s.hub.Subscribe()
	defer cancel()
	if err := s.file.write(next); err != nil {
		return configView{}, http.StatusInternalServerError, err
	}
	e, waitErr := s.awaitReload(ctx, events)
	switch {
	case waitErr == nil && e.Name == "config_reloaded":
		return configView{Outcome: "reloaded"}, http.StatusOK, nil
	case waitErr == nil && e.Name == "config_reload_needs_restart":
		return configView{Outcome: "needs_restart", Sections: stringList(e.Attrs["sections"])}, http.StatusOK, nil
	case waitErr == nil: // config_reload_rejected: the bot keeps its configuration; so does the file
		msg, _ := e.Attrs["error"].(string)
		if err := s.file.write(old); err != nil {
			return configView{}, http.StatusInternalServerError, err
		}
		return configView{Outcome: "rejected", Error: trimConfigPrefix(msg, s.file.path), Restored: true}, http.StatusUnprocessableEntity, nil
	case nextErr != nil:
		// The bot said nothing in time; the file is still invalid: put the old one back.
		if err := s.file.write(old); err != nil {
			return configView{}, http.StatusInternalServerError, err
		}
		return configView{Outcome: "rejected", Error: nextErr.Error(), Restored: true}, http.StatusUnprocessableEntity, nil
	}
	return configView{Outcome: "written", Error: waitErr.Error()}, http.StatusAccepted, nil
}

// awaitReload waits for the watcher's event about the file.
func (s *server) awaitReload(ctx context.Context, events <-chan Event) (Event, error) {
	guard := time.NewTimer(reloadGuard)
	defer guard.Stop()
	for {
		select {
		case e := <-events:
			if p, _ := e.Attrs["path"].(string); p != s.file.path {
				continue
			}
			switch e.Name {
			case "config_reloaded", "config_reload_rejected", "config_reload_needs_restart":
				return e, nil
			}
		case <-guard.C:
			return Event{}, errors.New("the file was written but the bot has not reported a reload yet")
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// parse validates data as the bot would load it (its environment applied);
// errors name the field.
func (s *server) parse(data []byte) (*config.Config, error) {
	tmp, err := os.CreateTemp(filepath.Dir(s.file.path), ".check-*.yaml")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, werr
	}
	cfg, err := config.Load(tmp.Name(), s.botEnv)
	if err != nil {
		return nil, errors.New(trimConfigPrefix(err.Error(), tmp.Name()))
	}
	return cfg, nil
}

func stringList(v any) []string {
	var out []string
	if xs, ok := v.([]any); ok {
		for _, x := range xs {
			out = append(out, fmt.Sprint(x))
		}
	}
	if xs, ok := v.([]string); ok {
		out = xs
	}
	return out
}
