package voice

import (
	"testing"

	"github.com/banterbot/banter/audio/vad"
	"github.com/banterbot/banter/config"
)

// TestListenerConfigDetector: voice.endpointing.detector picks the speech detector of every
// member's listener, and the shipped default is the neural one.
func TestListenerConfigDetector(t *testing.T) {
	for _, tc := range []struct {
		detector string
		want     vad.Algorithm
	}{
		{config.Default().Voice.Endpointing.Detector, vad.AlgorithmNeural},
		{"neural", vad.AlgorithmNeural},
		{"pitch", vad.AlgorithmSpeech},
		{"energy", vad.AlgorithmEnergy},
	} {
		cfg := config.Default()
		cfg.Voice.Endpointing.Detector = tc.detector
		if err := cfg.Validate(); err != nil {
			t.Fatalf("detector %q: %v", tc.detector, err)
		}
		s := &session{svc: &Service{opts: Options{Config: func() *config.Config { return cfg }}}}
		if got := s.listenerConfig().VAD.Algorithm; got != tc.want {
			t.Errorf("detector %q: listener uses %v, want %v", tc.detector, got, tc.want)
		}
	}
}
