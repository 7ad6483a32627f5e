package main

import (
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/banterbot/banter/audio/opus"
)

// buildVersion is set at link time: -ldflags "-X main.buildVersion=v1.2.3".
var buildVersion = ""

// version returns the link-time version, else the module version or VCS revision.
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "devel-" + rev
}

// registerLibopusInfo exports banter_libopus_info{version}, always 1: which
// libopus decodes the voice channels' untrusted audio (docs/audio.md).
func registerLibopusInfo(reg prometheus.Registerer) {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "banter_libopus_info",
		Help: "Always 1; the version label is the linked libopus (opus_get_version_string).",
	}, []string{"version"})
	g.WithLabelValues(opus.Version()).Set(1)
	reg.MustRegister(g)
}
