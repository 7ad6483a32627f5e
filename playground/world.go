package playground

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/banterbot/banter/config"
	discordsim "github.com/banterbot/banter/sim/discord"
	"github.com/banterbot/banter/sim/discord/control"
	"github.com/banterbot/banter/sim/discord/voicesim"
	openaisim "github.com/banterbot/banter/sim/openai"
)

// Names of the simulated server.
const (
	guildName  = "Playground"
	textName   = "general"
	threadName = "side-thread"
	voiceName  = "Voice"
	youName    = "sam"                // the member the page speaks as: a name, so the bot's replies read naturally
	demoKey    = "sk-playground-demo" // what the bot sends the demo brain (any key works)
)

// members are the simulated people besides youName that the page can speak as.
var members = []string{"alice", "bob"}

// demoLatency makes the demo brain take a moment, as a model does, so the
// bot's typing shows before its answer.
var demoLatency = openaisim.Latency{TimeToFirstToken: 400 * time.Millisecond, PerToken: 10 * time.Millisecond,
	TTSFirstByte: 150 * time.Millisecond}

// world is the simulated Discord server (with its voice server and control
// API) and, for the demo brain, the OpenAI simulator.
type world struct {
	vs     *voicesim.Server
	ds     *discordsim.Server
	ctl    *control.Controller
	ctlSrv *http.Server
	ctlURL string
	osim   *openaisim.Server // nil with real models
	// geminiDemo: the demo brain also serves the Gemini Live API (its Gemini face), because no
	// Gemini key is set (voice.realtime.provider gemini then talks to it).
	geminiDemo bool

	guild                  discordsim.GuildID
	general, thread, voice discordsim.ChannelID
	you                    discordsim.UserID
}

// startWorld starts the simulators and builds the server: #general, a
// thread under it, a voice room, sam (the page's member), alice and bob.
func startWorld(botName string, demo bool) (w *world, err error) {
	w = &world{}
	defer func() {
		if err != nil {
			w.close()
		}
	}()
	if w.vs, err = voicesim.New(voicesim.Options{DAVE: true}); err != nil {
		return nil, fmt.Errorf("playground: voice simulator: %w", err)
	}
	w.ds = discordsim.New(discordsim.WithVoiceSim(w.vs), discordsim.WithBotName(botName))
	if err = w.ds.Start("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("playground: Discord simulator: %w", err)
	}
	w.guild = w.ds.CreateGuild(guildName)
	w.general = w.ds.CreateTextChannel(w.guild, textName)
	w.voice = w.ds.CreateVoiceChannel(w.guild, voiceName)
	w.ctl = control.New(w.ds, w.guild)
	for _, name := range append([]string{youName}, members...) {
		id := w.ds.CreateUser(name)
		if err = w.ds.AddMember(w.guild, id); err != nil {
			return nil, fmt.Errorf("playground: %w", err)
		}
		w.ctl.Name(name, id)
		if name == youName {
			w.you = id
		}
	}
	if w.thread, err = w.ds.CreateThread(w.general, w.you, threadName); err != nil {
		return nil, fmt.Errorf("playground: %w", err)
	}
	ln, err := control.Listen("127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("playground: control API: %w", err)
	}
	w.ctlSrv = &http.Server{Handler: w.ctl.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = w.ctlSrv.Serve(ln) }()
	w.ctlURL = "http://" + ln.Addr().String()
	if demo {
		if w.osim, err = openaisim.Start("127.0.0.1:0", openaisim.WithRules(openaisim.DemoRules()...),
			openaisim.WithLatency(demoLatency)); err != nil {
			return nil, fmt.Errorf("playground: OpenAI simulator: %w", err)
		}
	}
	return w, nil
}

// close stops everything startWorld started, in reverse.
func (w *world) close() {
	if w.osim != nil {
		_ = w.osim.Close()
	}
	if w.ctl != nil {
		w.ctl.Close()
	}
	if w.ctlSrv != nil {
		_ = w.ctlSrv.Close()
	}
	if w.ds != nil {
		_ = w.ds.Close()
	}
	if w.vs != nil {
		_ = w.vs.Close()
	}
}

// geminiDemoProvider is the providers entry that points voice.geminiRealtime at the demo
// brain's Gemini face when no Gemini key is set.
const geminiDemoProvider = "gemini-demo"

// freshKeys are the settings a fresh playground config gets on top of its seed: initiative
// replies, so the eagerness sliders matter in #general from the start; and memory on, with a
// short quiet spell, so the memory panel shows facts forming, unless the seed sets these.
func freshKeys(seed []byte) map[string]any {
	set := map[string]any{"permissions.allowInitiativeReplies": true}
	for key, v := range map[string]any{"memory.enabled": true, "memory.quietSeconds": 5} {
		if !setIn(seed, key) {
			set[key] = v
		}
	}
	return set
}

// setIn reports whether a YAML document sets a dotted key.
func setIn(data []byte, key string) bool {
	var doc map[string]any
	if yaml.Unmarshal(data, &doc) != nil {
		return false
	}
	_, ok := lookup(doc, key)
	return ok
}

// writeConfig writes the config file the bot runs on: the seed (the
// playground's own file from an earlier run in the same folder, else the
// user's config, else empty) with the settings that tie it to this
// simulated server set afresh. A fresh file opens with a comment naming
// every one of those settings, so that whoever carries the file over to a
// real server knows what to leave behind.
func (w *world) writeConfig(f configFile, seed, dir string) error {
	data, err := f.read()
	if err != nil {
		return err
	}
	fresh := data == nil
	if fresh && seed != "" {
		seedFile := configFile{path: seed}
		if data, err = seedFile.read(); err != nil {
			return err
		}
	}
	set := w.simKeys(dir)
	header := configHeader(set)
	if fresh {
		for key, v := range freshKeys(data) {
			set[key] = v
		}
	}
	out, err := setKeys(data, set)
	if err != nil {
		return err
	}
	if fresh {
		out = append([]byte(header), out...)
	}
	return f.write(out)
}

// simKeys are the settings that tie the bot to this simulated server (and, for the demo brain,
// to the OpenAI simulator), set afresh at each start: none of them belongs on a real server.
func (w *world) simKeys(dir string) map[string]any {
	set := map[string]any{
		"discord.apiUrl":                   w.ds.APIBaseURL(),
		"discord.voiceCaFile":              w.vs.CAFile(),
		"discord.shards":                   "1",
		"discord.shardIds":                 "",
		"discord.processCount":             1,
		"discord.processIndex":             0,
		"permissions.initiativeChannelIds": []string{string(w.general), string(w.thread)},
		// Addressed turns in the initiative channels are answered as replies every time (the
		// default answers 35 % of them with a channel message), so the page threads them.
		"activity.initiativeReplyShare": 1,
		"permissions.allowedChannelIds": []string{},
		"voice.enabled":                 true,
		"voice.autoJoin":                []map[string]string{{"guildId": string(w.guild), "channelId": string(w.voice)}},
		"voice.inactivityLeaveSeconds":  86400,
		"voice.logChannelId":            "",
		"metrics.listen":                "127.0.0.1:0",
		"store.driver":                  "sqlite",
		"store.dsn":                     dir + "/banter.db",
		"permissions.blockedUserIds":    []string{},
		"memory.guildIds":               []string{}, // real servers' ids never name the simulated one
	}
	if w.osim != nil {
		set["llm.baseUrl"] = w.osim.BaseURL()
	}
	if w.geminiDemo {
		set["providers."+geminiDemoProvider+".kind"] = config.KindGemini
		set["providers."+geminiDemoProvider+".baseUrl"] = "http" + strings.TrimPrefix(w.osim.GeminiURL(), "ws")
		set["voice.geminiRealtime.provider"] = geminiDemoProvider
	}
	return set
}

// configHeader is a fresh playground config's opening comment: what the file is, and the keys
// simKeys sets (a provider's keys named once, as the provider), wrapped as comment lines.
func configHeader(set map[string]any) string {
	var keys []string
	for key := range set {
		if rest, ok := strings.CutPrefix(key, "providers."); ok {
			key = "providers." + strings.SplitN(rest, ".", 2)[0]
		}
		if !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	text := "The playground's config: banter runs on this file and reloads it when it changes. " +
		"The page's controls edit it. These keys point it at the simulated server and are set afresh " +
		"at each start; leave them out when you carry the file over to a real server's banter.yaml: " +
		strings.Join(keys, ", ") + "."
	var b, line strings.Builder
	for _, word := range strings.Fields(text) {
		if line.Len() > 0 && line.Len()+1+len(word) > 96 {
			b.WriteString("#" + line.String() + "\n")
			line.Reset()
		}
		line.WriteString(" " + word)
	}
	b.WriteString("#" + line.String() + "\n")
	return b.String()
}

// botEnv is the bot's environment: the simulated Discord's token, the demo
// brain's key, no variable that would point the bot elsewhere.
func (w *world) botEnv(getenv func(string) string) func(string) string {
	return func(k string) string {
		switch k {
		case config.EnvDiscordToken:
			return w.ds.Token()
		case config.EnvConfigPath, config.EnvMetricsListen, config.EnvShardIDs, config.EnvProcessIndex:
			return ""
		case config.EnvOpenAIAPIKey:
			if w.osim != nil {
				return demoKey
			}
		case config.EnvGeminiAPIKey:
			if w.geminiDemo {
				return demoKey
			}
		}
		return getenv(k)
	}
}

// waitBot waits until the bot has logged in to the simulated gateway, or
// it stopped, or the guard passed.
func (w *world) waitBot(ctx context.Context, guard time.Duration, botDone <-chan error) error {
	ctx, cancel := context.WithTimeout(ctx, guard)
	defer cancel()
	ready := make(chan error, 1)
	go func() { ready <- w.ds.Await(ctx, func() bool { return w.ds.Connected(w.ds.BotID()) }) }()
	select {
	case err := <-ready:
		if err != nil {
			return fmt.Errorf("the bot did not log in to the simulated Discord: %w", err)
		}
		return nil
	case err := <-botDone:
		cancel()
		<-ready
		if err == nil {
			err = errors.New("stopped")
		}
		return fmt.Errorf("the bot stopped before logging in: %w", err)
	}
}
